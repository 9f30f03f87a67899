package engine

import (
	"errors"
	"iter"

	"github.com/churon/churon/engine/backend"
)

// appendRows reads cache rows for a snapshot, holding the model's lock:
// a device runs one thing at a time, and the cache must not move to
// another device in the middle of a read.
func (s *Sequence) appendRows(dst []byte, layer int, values bool, p0, p1 int) ([]byte, error) {
	s.m.exec.Lock()
	defer s.m.exec.Unlock()
	if err := s.cacheCurrent(); err != nil {
		return dst, err
	}
	return s.held.cache.KV(layer).AppendRows(dst, values, p0, p1)
}

// setRows is appendRows's twin for restoring.
func (s *Sequence) setRows(layer int, values bool, p0 int, src []byte) error {
	s.m.exec.Lock()
	defer s.m.exec.Unlock()
	if err := s.cacheCurrent(); err != nil {
		return err
	}
	return s.held.cache.KV(layer).SetRows(values, p0, src)
}

// cacheCurrent says why the sequence's cache cannot be read or written
// now. The caller holds s.m.exec.
func (s *Sequence) cacheCurrent() error {
	switch {
	case s.closed || s.m.closed || s.held.cache == nil:
		return ErrClosed
	case s.held.cache.Plan() != s.m.plan:
		return errors.New("engine: the sequence's cache was on a device that failed; it is rebuilt at its next use")
	}
	return nil
}

// rowSize is the bytes of one position's keys (or values) in one layer.
func (s *Sequence) rowSize() int {
	return backend.KVSpec{Type: s.kvType, Context: s.ctxLen, Dim: s.m.net.Config().KVDim()}.RowSize()
}

// kvHalves yields each layer's keys (values false), then its values: the
// order in which a segment stores the rows. Layers without KV rows (a
// recurrent layer's) are left out.
func (s *Sequence) kvHalves() iter.Seq2[int, bool] {
	return func(yield func(layer int, values bool) bool) {
		for l := range s.held.cache.Layers() {
			if s.held.cache.KV(l) == nil {
				continue
			}
			if !yield(l, false) || !yield(l, true) {
				return
			}
		}
	}
}
