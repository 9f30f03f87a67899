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
	// What the file holds, as a store knows it (none before the first
	// segment).
	onto, _ := ScanSnapshot(bytes.NewReader(h.file), int64(len(h.file)), ScanOptions{})
	var b bytes.Buffer
	if err := h.seq.WriteSnapshotSegment(&b, p, onto); err != nil {
		t.Fatal(err)
	}
	// The size is the format's: 28 bytes of head, checksums and the count
	// of recurrent states (none) and a first row per layer, the token
	// ids, K and V rows per layer, and the logits. Without rings every
	// layer has rows of the new positions.
	c := h.seq.held.cache
	rows := h.seq.Len() - p
	want := int64(28 + 4*c.Layers() + 4*rows + 2*c.Layers()*rows*c.KV(0).Spec().RowSize() + 4*h.vocab)
	if h.rings() || h.seq.recurrent() {
		want = h.seq.SnapshotSegmentSize(p, onto)
	}
	if int64(b.Len()) != want || h.seq.SnapshotSegmentSize(p, onto) != want {
		t.Fatalf("segment of %d rows: %d bytes, SnapshotSegmentSize %d, want %d", rows, b.Len(), h.seq.SnapshotSegmentSize(p, onto), want)
	}
	h.file = append(h.file, b.Bytes()...)
	h.ends = append(h.ends, len(h.file))
	h.state = slices.Clone(h.seq.Tokens())
	h.canon = append(h.canon, snapshotBytes(t, h.seq))
}

// rings reports whether the sequence keeps a layer in a ring.
func (h *snapHistory) rings() bool {
	c := h.seq.held.cache
	for l := range c.Layers() {
		if c.KV(l).Spec().Ring > 0 {
			return true
		}
	}
	return false
}

// snapStep is one save of a history: the sequence is cut to keep tokens
// (-1: keeps all) and fed feed new ones.
type snapStep struct {
	name       string
	keep, feed int
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
	steps := []snapStep{
		{"prompt", -1, 20},
		{"follow-up", -1, 7},
		{"follow-up", -1, 3},
		{"edit", 25, 6},
		{"truncate only", 20, 0},
		{"regenerate", 20, 4},
		{"nothing new", -1, 0},
		{"follow-up", -1, 9},
	}
	for _, mc := range []struct {
		name string
		spec synth.Spec
		kv   KVType
	}{{"llama-F32/f16", synth.Tiny("llama"), KVF16}, {"qwen2-Q8_0/q8_0", q8, KVQ8_0}, {"llama-F32/f32", synth.Tiny("llama"), KVF32}} {
		t.Run(mc.name, func(t *testing.T) {
			m := synthModel(t, mc.spec)
			snapHistoryCheck(t, m, SequenceOptions{Context: 64, KVType: mc.kv, Batch: 8}, steps)
		})
	}
}

// TestSnapshotSegmentsRings: the same with sliding-window layers whose
// rings hold the last 576 positions: segments longer than a ring (which
// send its last rows only), a regeneration within its margin, and cuts
// further back than it reaches, after which a segment sends the rows
// before the cut that the file's rings lost — so that after every save
// the file holds exactly what the sequence holds.
func TestSnapshotSegmentsRings(t *testing.T) {
	steps := []snapStep{
		{"prompt", -1, 1000},
		{"follow-up", -1, 30},
		{"regenerate within the margin", 730, 50},
		{"edit past the rings", 150, 40},
		{"follow-up longer than a ring", -1, 700},
		{"truncate only, past the rings", 300, 0},
		{"follow-up", -1, 20},
		{"nothing new", -1, 0},
		{"follow-up", -1, 9},
	}
	for name, spec := range ringSpecs(t) {
		for _, kv := range []KVType{KVF16, KVQ8_0} {
			t.Run(name+"/"+kv.String(), func(t *testing.T) {
				m := synthModel(t, spec)
				snapHistoryCheck(t, m, SequenceOptions{Context: ringCtx, KVType: kv, Batch: 128}, steps)
			})
		}
	}
}

func snapHistoryCheck(t *testing.T, m *Model, opt SequenceOptions, steps []snapStep) {
	ctx := context.Background()
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
		held := make([]int, h.seq.held.cache.Layers())
		for l := range held {
			held[l] = h.seq.held.cache.Held(l)
		}
		if !slices.Equal(ix.Held, held) {
			t.Fatalf("step %d (%s): the restored layers hold rows from %v, the sequence's from %v", i, st.name, ix.Held, held)
		}
		for _, o := range []ScanOptions{{}, {VerifyLast: true}, {From: prev}, {From: prev, VerifyLast: true}} {
			sc, err := ScanSnapshot(bytes.NewReader(h.file), int64(len(h.file)), o)
			if err != nil || sc.End != ix.End || sc.Segments != ix.Segments || sc.Sum != ix.Sum || !slices.Equal(sc.Tokens, h.state) ||
				sc.SnapshotInfo != got.SnapshotInfo() || !slices.Equal(sc.Held, ix.Held) {
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
	cold, _ := m.NewSequence(opt)
	if err := cold.Feed(ctx, h.seq.Tokens()); err != nil {
		t.Fatal(err)
	}
	sameFloats(t, "a cold prefill", cold.Logits(), h.seq.Logits())
}

// TestSnapshotTorn: a last segment cut at every byte, or with any bit of
// it flipped after its head, leaves exactly the state of the segments
// before it (and says how many bytes it dropped); a scan agrees. A flip in
// its head is corruption (its length cannot be trusted) — never another
// state. For a follow-up, an edit (whose rows overwrite the state's, put
// back) and a logits-only segment.
func TestSnapshotTorn(t *testing.T) {
	spec := synth.Tiny("llama")
	spec.Vocab = 260 // fewer bytes of logits to cut and flip
	m := synthModel(t, spec)
	opt := SequenceOptions{Context: 48, Batch: 8}
	for _, last := range []snapStep{{"follow-up", -1, 4}, {"edit", 9, 5}, {"logits only", 14, 0}} {
		t.Run(last.name, func(t *testing.T) {
			snapTornCheck(t, m, opt, []snapStep{{"", -1, 12}, {"", -1, 5}, last}, 1)
		})
	}
}

// TestSnapshotTornRings: the same over rings that have wrapped, where a
// segment's rows overwrite other positions' rows in the same slots, and
// an edit past the rings sends rows from before its cut; every 37th byte.
func TestSnapshotTornRings(t *testing.T) {
	spec := ringSpecs(t)["gpt-oss-MXFP4_MOE"]
	m := synthModel(t, spec)
	opt := SequenceOptions{Context: ringCtx, Batch: 128}
	for _, last := range []snapStep{{"follow-up", -1, 4}, {"regenerate", 690, 3}, {"edit past the rings", 100, 12}} {
		t.Run(last.name, func(t *testing.T) {
			snapTornCheck(t, m, opt, []snapStep{{"", -1, 700}, {"", -1, 5}, last}, 37)
		})
	}
}

// snapTornCheck builds a history of three segments and checks the third
// cut at and flipped at every stride-th byte of it (and every byte of its
// head).
func snapTornCheck(t *testing.T, m *Model, opt SequenceOptions, steps []snapStep, stride int) {
	ctx := context.Background()
	h := newSnapHistory(t, m, opt)
	for _, st := range steps {
		h.step(st.keep, st.feed)
	}
	base, full := h.ends[1], h.ends[2]
	want := h.canon[1]
	ref, err := m.ReadSnapshot(bytes.NewReader(h.file[:base]), opt)
	if err != nil {
		t.Fatal(err)
	}
	head := h.seq.layout().headSize()
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
		if err != nil || sc.End != int64(base) || !slices.Equal(sc.Tokens, ref.Tokens()) || !slices.Equal(sc.Held, ix.Held) {
			t.Fatalf("%s: scan %+v, %v", what, sc, err)
		}
	}
	sampled := func(i int) bool { return i < base+head || (i-base)%stride == 0 || i >= full-4 }
	for cut := base; cut < full; cut++ {
		if sampled(cut) {
			check(fmt.Sprintf("cut at %d of [%d,%d)", cut, base, full), h.file[:cut], false)
		}
	}
	for i := base; i < full; i++ {
		if sampled(i) {
			d := bytes.Clone(h.file)
			d[i] ^= 1 << (i % 8)
			check(fmt.Sprintf("bit flip at %d of [%d,%d)", i, base, full), d, i < base+head)
		}
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
