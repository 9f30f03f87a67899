package engine

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/churon/churon/engine/quant"
	"github.com/churon/churon/models/synth"
)

// snapHistory is a sequence with its snapshot file built the way a store
// builds one: the header, then a segment per save from the common prefix
// of the file's state and the sequence.
type snapHistory struct {
	t     *testing.T
	m     *Model
	seq   *Sequence
	file  []byte
	state []int32 // the file's tokens
	ends  []int   // len(file) after each segment
	canon [][]byte
	vocab int
	seed  uint64
}

func newSnapHistory(t *testing.T, m *Model, opt SequenceOptions) *snapHistory {
	seq, err := m.NewSequence(opt)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := seq.WriteSnapshotHeader(&b); err != nil {
		t.Fatal(err)
	}
	if int64(b.Len()) != seq.SnapshotHeaderSize() {
		t.Fatalf("header of %d bytes, SnapshotHeaderSize %d", b.Len(), seq.SnapshotHeaderSize())
	}
	return &snapHistory{t: t, m: m, seq: seq, file: b.Bytes(), vocab: m.Info().VocabSize, seed: 100}
}

// step truncates the sequence to keep tokens (-1: keeps all), feeds n new
// ones, and appends a segment.
func (h *snapHistory) step(keep, n int) {
	t := h.t
	t.Helper()
	if keep >= 0 {
		if err := h.seq.Truncate(keep); err != nil {
			t.Fatal(err)
		}
	}
	if n > 0 {
		h.seed++
		if err := h.seq.Feed(context.Background(), snapTokens(n, h.vocab, h.seed)); err != nil {
			t.Fatal(err)
		}
	}
	p := 0
	for p < len(h.state) && p < h.seq.Len() && h.state[p] == h.seq.Tokens()[p] {
		p++
	}
	var b bytes.Buffer
	if err := h.seq.WriteSnapshotSegment(&b, p); err != nil {
		t.Fatal(err)
	}
	// The size is the format's: 24 bytes of head and checksums, the
	// token ids, K and V rows per layer, and the logits.
	c := h.seq.held.cache
	rows := h.seq.Len() - p
	want := int64(24 + 4*rows + 2*c.Layers()*rows*c.KV(0).Spec().RowSize() + 4*h.vocab)
	if int64(b.Len()) != want || h.seq.SnapshotSegmentSize(p) != want {
		t.Fatalf("segment of %d rows: %d bytes, SnapshotSegmentSize %d, want %d", rows, b.Len(), h.seq.SnapshotSegmentSize(p), want)
	}
	h.file = append(h.file, b.Bytes()...)
	h.ends = append(h.ends, len(h.file))
	h.state = slices.Clone(h.seq.Tokens())
	h.canon = append(h.canon, snapshotBytes(t, h.seq))
}

// TestSnapshotSegments: a file grown by segments — follow-ups, edits,
// a bare truncation, a save of nothing new — restores after every save to
// exactly the sequence's state (the same bytes as its WriteSnapshot: the
// same tokens, KV rows and logits), a scan finds the same tokens, also
// going on from the previous scan, and the restored sequence continues
// as the original does.
func TestSnapshotSegments(t *testing.T) {
	q8 := synth.Tiny("qwen2")
	q8.Type = quant.Q8_0
	steps := []struct {
		name       string
		keep, feed int
	}{
		{"prompt", -1, 20},
		{"follow-up", -1, 7},
		{"follow-up", -1, 3},
		{"edit", 25, 6},
		{"truncate only", 20, 0},
		{"regenerate", 20, 4},
		{"nothing new", -1, 0},
		{"follow-up", -1, 9},
	}
	ctx := context.Background()
	for _, mc := range []struct {
		name string
		spec synth.Spec
		kv   KVType
	}{{"llama-F32/f16", synth.Tiny("llama"), KVF16}, {"qwen2-Q8_0/q8_0", q8, KVQ8_0}, {"llama-F32/f32", synth.Tiny("llama"), KVF32}} {
		t.Run(mc.name, func(t *testing.T) {
			m := synthModel(t, mc.spec)
			opt := SequenceOptions{Context: 64, KVType: mc.kv, Batch: 8}
			h := newSnapHistory(t, m, opt)
			var prev *SnapshotIndex
			for i, st := range steps {
				h.step(st.keep, st.feed)
				got, ix, err := m.RestoreSnapshot(bytes.NewReader(h.file), opt)
				if err != nil {
					t.Fatalf("step %d (%s): %v", i, st.name, err)
				}
				if !bytes.Equal(snapshotBytes(t, got), h.canon[i]) {
					t.Fatalf("step %d (%s): restored another state", i, st.name)
				}
				if ix.Segments != i+1 || ix.End != int64(len(h.file)) || ix.Tail != 0 || !slices.Equal(ix.Tokens, h.state) {
					t.Fatalf("step %d (%s): index %+v", i, st.name, ix)
				}
				for _, o := range []ScanOptions{{}, {VerifyLast: true}, {From: prev}, {From: prev, VerifyLast: true}} {
					sc, err := ScanSnapshot(bytes.NewReader(h.file), int64(len(h.file)), o)
					if err != nil || sc.End != ix.End || sc.Segments != ix.Segments || sc.Sum != ix.Sum || !slices.Equal(sc.Tokens, h.state) || sc.SnapshotInfo != got.SnapshotInfo() {
						t.Fatalf("step %d (%s): scan %+v: %+v, %v", i, st.name, o, sc, err)
					}
				}
				lo := ix.LogitsOffset()
				for j, f := range got.Logits() {
					if binary.LittleEndian.Uint32(h.file[lo+4*int64(j):]) != math.Float32bits(f) {
						t.Fatalf("step %d: LogitsOffset %d does not hold the logits", i, lo)
					}
				}
				prev = ix
			}
			// The file is several times the state's own snapshot; both
			// restore to the same sequence, which goes on as the original.
			t.Logf("%d segments: %d bytes; one segment: %d", len(steps), len(h.file), h.seq.SnapshotSize())
			whole, err := m.ReadSnapshot(bytes.NewReader(snapshotBytes(t, h.seq)), opt)
			if err != nil {
				t.Fatal(err)
			}
			grown, err := m.ReadSnapshot(bytes.NewReader(h.file), opt)
			if err != nil {
				t.Fatal(err)
			}
			more := snapTokens(5, h.vocab, 77)
			for _, s := range []*Sequence{h.seq, whole, grown} {
				if err := s.Feed(ctx, more); err != nil {
					t.Fatal(err)
				}
			}
			sameFloats(t, "grown file, continued", grown.Logits(), h.seq.Logits())
			sameFloats(t, "one segment, continued", whole.Logits(), h.seq.Logits())
		})
	}
}

// TestSnapshotTorn: a last segment cut at every byte, or with any bit of
// it flipped after its head, leaves exactly the state of the segments
// before it (and says how many bytes it dropped); a scan agrees. A flip in
// its head is corruption (its length cannot be trusted) — never another
// state. For a follow-up, an edit (whose rows overwrite the state's, put
// back) and a logits-only segment.
func TestSnapshotTorn(t *testing.T) {
	ctx := context.Background()
	spec := synth.Tiny("llama")
	spec.Vocab = 260 // fewer bytes of logits to cut and flip
	m := synthModel(t, spec)
	opt := SequenceOptions{Context: 48, Batch: 8}
	for _, last := range []struct {
		name       string
		keep, feed int
	}{{"follow-up", -1, 4}, {"edit", 9, 5}, {"logits only", 14, 0}} {
		t.Run(last.name, func(t *testing.T) {
			h := newSnapHistory(t, m, opt)
			h.step(-1, 12)
			h.step(-1, 5)
			h.step(last.keep, last.feed)
			base, full := h.ends[1], h.ends[2]
			want := h.canon[1]
			ref, err := m.ReadSnapshot(bytes.NewReader(h.file[:base]), opt)
			if err != nil {
				t.Fatal(err)
			}
			check := func(what string, data []byte, headFlip bool) {
				t.Helper()
				got, ix, err := m.RestoreSnapshot(bytes.NewReader(data), opt)
				if headFlip && errors.Is(err, ErrSnapshotCorrupt) {
					return
				}
				if err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				if ix.End != int64(base) || ix.Tail != int64(len(data)-base) || ix.Segments != 2 {
					t.Fatalf("%s: index end %d tail %d segments %d, want end %d", what, ix.End, ix.Tail, ix.Segments, base)
				}
				if !bytes.Equal(snapshotBytes(t, got), want) {
					t.Fatalf("%s: not the previous state", what)
				}
				sc, err := ScanSnapshot(bytes.NewReader(data), int64(len(data)), ScanOptions{VerifyLast: true})
				if err != nil || sc.End != int64(base) || !slices.Equal(sc.Tokens, ref.Tokens()) {
					t.Fatalf("%s: scan %+v, %v", what, sc, err)
				}
			}
			for cut := base; cut < full; cut++ {
				check(fmt.Sprintf("cut at %d of [%d,%d)", cut, base, full), h.file[:cut], false)
			}
			for i := base; i < full; i++ {
				d := bytes.Clone(h.file)
				d[i] ^= 1 << (i % 8)
				check(fmt.Sprintf("bit flip at %d of [%d,%d)", i, base, full), d, i < base+snapSegHead)
			}
			// The torn state goes on as the previous one does.
			got, err := m.ReadSnapshot(bytes.NewReader(h.file[:full-1]), opt)
			if err != nil {
				t.Fatal(err)
			}
			more := snapTokens(6, h.vocab, 55)
			for _, s := range []*Sequence{ref, got} {
				if err := s.Feed(ctx, more); err != nil {
					t.Fatal(err)
				}
			}
			sameFloats(t, "torn, continued", got.Logits(), ref.Logits())
		})
	}
}

// TestSnapshotEarlierDamage: a flipped bit in any segment but the last is
// corruption, whatever it hits: the segments after it were written over
// the state it held.
func TestSnapshotEarlierDamage(t *testing.T) {
	m := synthModel(t, synth.Tiny("llama"))
	opt := SequenceOptions{Context: 48, Batch: 8}
	h := newSnapHistory(t, m, opt)
	h.step(-1, 10)
	h.step(6, 5)
	h.step(-1, 3)
	start := int(h.seq.SnapshotHeaderSize())
	for i := start; i < h.ends[1]; i++ {
		d := bytes.Clone(h.file)
		d[i] ^= 1 << (i % 8)
		s, err := m.ReadSnapshot(bytes.NewReader(d), opt)
		if !errors.Is(err, ErrSnapshotCorrupt) || s != nil {
			t.Fatalf("bit flip at %d (segments end at %v): %v", i, h.ends, err)
		}
	}
}

// TestScanSnapshotFrom: an index of another file (same header, other
// segments) is not gone on from; the scan starts over.
func TestScanSnapshotFrom(t *testing.T) {
	m := synthModel(t, synth.Tiny("llama"))
	opt := SequenceOptions{Context: 48}
	a := newSnapHistory(t, m, opt)
	a.step(-1, 10)
	ia, err := ScanSnapshot(bytes.NewReader(a.file), int64(len(a.file)), ScanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b := newSnapHistory(t, m, opt)
	b.seed = 500
	b.step(-1, 10)
	b.step(-1, 4)
	ib, err := ScanSnapshot(bytes.NewReader(b.file), int64(len(b.file)), ScanOptions{From: ia})
	if err != nil || !slices.Equal(ib.Tokens, b.state) || ib.Segments != 2 {
		t.Fatalf("scan from another file's index: %+v, %v", ib, err)
	}
	// The same file grown: goes on from the index.
	a.step(-1, 4)
	ia2, err := ScanSnapshot(bytes.NewReader(a.file), int64(len(a.file)), ScanOptions{From: ia})
	if err != nil || !slices.Equal(ia2.Tokens, a.state) || ia2.Segments != 2 {
		t.Fatalf("scan on from its index: %+v, %v", ia2, err)
	}
}
