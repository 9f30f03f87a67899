package engine

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/churon/churon/models/synth"
)

// TestSnapshotMismatch: another model, context, KV type or format
// version is refused with ErrSnapshotMismatch.
func TestSnapshotMismatch(t *testing.T) {
	ctx := context.Background()
	spec := synth.Tiny("llama")
	a := synthModel(t, spec)
	spec.Seed = 2 // same shape and header, other weights
	b := synthModel(t, spec)
	opt := SequenceOptions{Context: 64}
	s, _ := a.NewSequence(opt)
	if err := s.Feed(ctx, snapTokens(9, a.Info().VocabSize, 5)); err != nil {
		t.Fatal(err)
	}
	snap := snapshotBytes(t, s)
	badVersion := bytes.Clone(snap)
	binary.LittleEndian.PutUint32(badVersion[8:], SnapshotFormat+1)
	cases := []struct {
		name string
		m    *Model
		opt  SequenceOptions
		data []byte
	}{
		{"other model", b, opt, snap},
		{"other context", a, SequenceOptions{Context: 65}, snap},
		{"default context", a, SequenceOptions{}, snap},
		{"other KV type", a, SequenceOptions{Context: 64, KVType: KVF32}, snap},
		{"unknown KV type", a, SequenceOptions{Context: 64, KVType: 9}, snap},
		{"format version", a, opt, badVersion},
	}
	for _, c := range cases {
		_, err := c.m.ReadSnapshot(bytes.NewReader(c.data), c.opt)
		if !errors.Is(err, ErrSnapshotMismatch) || errors.Is(err, ErrSnapshotCorrupt) {
			t.Errorf("%s: %v, want ErrSnapshotMismatch", c.name, err)
		} else {
			t.Logf("%s: %v", c.name, err)
		}
	}
	if _, err := a.ReadSnapshot(bytes.NewReader(snap), opt); err != nil {
		t.Fatalf("the matching case fails: %v", err)
	}
}

// TestSnapshotCorrupt: in a snapshot of one segment (as WriteSnapshot
// writes), every truncation and random bit flips are refused as corrupt
// (a flip in the version field as a mismatch), never a panic, never a
// sequence: a torn first segment leaves no state to fall back on. Bytes
// after it are a torn second segment: dropped.
func TestSnapshotCorrupt(t *testing.T) {
	ctx := context.Background()
	m := synthModel(t, synth.Tiny("llama"))
	opt := SequenceOptions{Context: 32}
	s, _ := m.NewSequence(opt)
	if err := s.Feed(ctx, snapTokens(7, m.Info().VocabSize, 6)); err != nil {
		t.Fatal(err)
	}
	snap := snapshotBytes(t, s)
	refused := func(what string, data []byte) {
		t.Helper()
		seq, err := m.ReadSnapshot(bytes.NewReader(data), opt)
		if err == nil || seq != nil {
			t.Fatalf("%s: accepted", what)
		}
		if !errors.Is(err, ErrSnapshotCorrupt) && !errors.Is(err, ErrSnapshotMismatch) {
			t.Fatalf("%s: %v, want a corrupt or mismatch error", what, err)
		}
	}
	for n := range len(snap) {
		refused("truncated", snap[:n])
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 3000 {
		d := bytes.Clone(snap)
		for range 1 + r.IntN(3) {
			i := r.IntN(len(d))
			d[i] ^= 1 << r.IntN(8)
		}
		refused("bit flip", d)
	}
	for _, extra := range []int{1, 5, snapSegHead - 1} {
		got, ix, err := m.RestoreSnapshot(bytes.NewReader(append(bytes.Clone(snap), make([]byte, extra)...)), opt)
		if err != nil || ix.Tail != int64(extra) || ix.End != int64(len(snap)) || !bytes.Equal(snapshotBytes(t, got), snap) {
			t.Fatalf("%d trailing bytes: %v, index %+v", extra, err, ix)
		}
	}
	refused("a trailing segment head of zeros", append(bytes.Clone(snap), make([]byte, snapSegHead)...))
	refused("empty", nil)
	refused("garbage", bytes.Repeat([]byte{0xAB}, 4096))
	if _, err := m.ReadSnapshot(bytes.NewReader(snap), opt); err != nil {
		t.Fatal(err)
	}
}

// TestSnapshotReadError: an I/O error is neither corrupt nor mismatch,
// so a store does not delete a sound file over a failing disk.
func TestSnapshotReadError(t *testing.T) {
	m := synthModel(t, synth.Tiny("llama"))
	s, _ := m.NewSequence(SequenceOptions{Context: 32})
	snap := snapshotBytes(t, s)
	boom := errors.New("disk on fire")
	_, err := m.ReadSnapshot(&failingReader{data: snap[:100], err: boom}, SequenceOptions{Context: 32})
	if !errors.Is(err, boom) || errors.Is(err, ErrSnapshotCorrupt) || errors.Is(err, ErrSnapshotMismatch) {
		t.Fatalf("%v", err)
	}
}

type failingReader struct {
	data []byte
	err  error
}

func (f *failingReader) Read(p []byte) (int, error) {
	if len(f.data) == 0 {
		return 0, f.err
	}
	n := copy(p, f.data)
	f.data = f.data[n:]
	return n, nil
}

func FuzzReadSnapshot(f *testing.F) {
	ctx := context.Background()
	spec := synth.Tiny("llama")
	spec.Layers = 1
	path := synthFile(f, "m.gguf", spec)
	m, err := Load(ctx, path, LoadOptions{Threads: 1})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { m.Close() })
	opt := SequenceOptions{Context: 16}
	s, _ := m.NewSequence(opt)
	_ = s.Feed(ctx, []int32{1, 300, 17})
	var b bytes.Buffer
	if err := s.WriteSnapshot(&b); err != nil {
		f.Fatal(err)
	}
	f.Add(b.Bytes())
	f.Add(b.Bytes()[:40])
	e, _ := m.NewSequence(opt)
	var eb bytes.Buffer
	_ = e.WriteSnapshot(&eb)
	f.Add(eb.Bytes())
	// Several segments: a follow-up, an edit, and a torn one.
	_ = s.Feed(ctx, []int32{5, 6})
	_ = s.WriteSnapshotSegment(&b, 3)
	_ = s.Truncate(2)
	_ = s.Feed(ctx, []int32{9})
	_ = s.WriteSnapshotSegment(&b, 2)
	f.Add(b.Bytes())
	_ = s.WriteSnapshotSegment(&b, 1)
	f.Add(b.Bytes()[:b.Len()-7])
	f.Fuzz(func(t *testing.T, data []byte) {
		seq, err := m.ReadSnapshot(bytes.NewReader(data), opt)
		if err != nil {
			if seq != nil {
				t.Fatal("a sequence with an error")
			}
			if _, ierr := ReadSnapshotInfo(bytes.NewReader(data)); ierr == nil && len(data) < 16 {
				t.Fatal("header read from too few bytes")
			}
			return
		}
		// Accepted: its whole segments end at End, the rest is a torn
		// tail; without the tail it reads as the same state, and a scan
		// finds what the reader found.
		got, ix, err := m.RestoreSnapshot(bytes.NewReader(data), opt)
		if err != nil || ix.End+ix.Tail != int64(len(data)) || !slices.Equal(ix.Tokens, got.Tokens()) {
			t.Fatalf("RestoreSnapshot: %v, index %+v", err, ix)
		}
		var out bytes.Buffer
		if err := seq.WriteSnapshot(&out); err != nil {
			t.Fatal(err)
		}
		again, ix2, err := m.RestoreSnapshot(bytes.NewReader(data[:ix.End]), opt)
		if err != nil || ix2.Tail != 0 || ix2.End != ix.End || ix2.Sum != ix.Sum {
			t.Fatalf("without its tail: %v, index %+v", err, ix2)
		}
		var out2 bytes.Buffer
		if err := again.WriteSnapshot(&out2); err != nil || !bytes.Equal(out2.Bytes(), out.Bytes()) {
			t.Fatal("without its tail, another state")
		}
		sc, err := ScanSnapshot(bytes.NewReader(data), int64(len(data)), ScanOptions{VerifyLast: true})
		if err != nil || sc.End != ix.End || sc.Segments != ix.Segments || sc.Sum != ix.Sum || !slices.Equal(sc.Tokens, ix.Tokens) {
			t.Fatalf("scan %+v, %v; reader %+v", sc, err, ix)
		}
		// One whole segment and nothing else is WriteSnapshot's own form.
		if ix.Segments == 1 && ix.Tail == 0 && !bytes.Equal(out.Bytes(), data) {
			t.Fatalf("accepted %d bytes that write back as %d other bytes", len(data), out.Len())
		}
	})
}
