package engine

import (
	"bytes"
	"context"
	"slices"
	"testing"
)

// ckptPositions lists the positions of a sequence's checkpoints.
func ckptPositions(s *Sequence) []int {
	var p []int
	for _, cp := range s.ckpts {
		p = append(p, cp.pos)
	}
	return p
}

// TestSnapshotCheckpointsBounded: of a long qwen35 conversation's
// checkpoints a snapshot segment carries at most snapCheckpoints, the
// newest always among them and the rest spread as the sequence itself
// would keep them, besides the state at the end — whole, and appended
// after a follow-up. The restored sequence holds those and no others,
// and a cut after the restore resumes from the newest one at or before
// it with a cold prefill's logits.
func TestSnapshotCheckpointsBounded(t *testing.T) {
	m := recurrentModel(t, "qwen35-test")
	ctx := context.Background()
	vocab := m.Info().VocabSize
	opt := SequenceOptions{Context: 1024, CheckpointEvery: 16}
	seq := must(m.NewSequence(opt))
	defer seq.Close()
	// Three prompts: checkpoints every 16 positions and at each turn
	// boundary, many more than a segment carries.
	for i, n := range []int{90, 61, 40} {
		if err := seq.Feed(ctx, snapTokens(n, vocab, uint64(10+i))); err != nil {
			t.Fatal(err)
		}
	}
	all := ckptPositions(seq)
	if len(all) <= snapCheckpoints+1 {
		t.Fatalf("only %d checkpoints (%v): the test needs more than a segment carries", len(all), all)
	}
	// What the sequence itself would keep of them with room for
	// snapCheckpoints: the same choice, made by evicting.
	keep := func(from int) []int {
		var p []int
		for _, q := range all {
			if q > from && q < seq.Len() {
				p = append(p, q)
			}
		}
		for len(p) > snapCheckpoints {
			cps := make([]checkpoint, len(p))
			for i, q := range p {
				cps[i].pos = q
			}
			p = slices.Delete(p, evictable(cps), evictable(cps)+1)
		}
		return p
	}
	var file bytes.Buffer
	if err := seq.WriteSnapshot(&file); err != nil {
		t.Fatal(err)
	}
	if int64(file.Len()) != seq.SnapshotSize() {
		t.Fatalf("wrote %d bytes, SnapshotSize says %d", file.Len(), seq.SnapshotSize())
	}
	want := append(keep(0), seq.Len())
	if newest := all[len(all)-1]; newest < seq.Len() && !slices.Contains(want, newest) {
		t.Fatalf("the snapshot's states %v leave out the newest checkpoint %d", want, newest)
	}
	got := must(m.ReadSnapshot(bytes.NewReader(file.Bytes()), opt))
	defer got.Close()
	if p := ckptPositions(got); !slices.Equal(p, want) {
		t.Fatalf("restored checkpoints %v, want %v (of %v)", p, want, all)
	}
	sameFloats(t, "restored logits", got.Logits(), seq.Logits())

	// A follow-up appended: its segment carries its own checkpoints,
	// bounded too, after what the file held.
	from := seq.Len()
	if err := seq.Feed(ctx, snapTokens(70, vocab, 20)); err != nil {
		t.Fatal(err)
	}
	all = ckptPositions(seq)
	seg := seq.SnapshotSegmentSize(from, nil)
	before := file.Len()
	if err := seq.WriteSnapshotSegment(&file, from, nil); err != nil {
		t.Fatal(err)
	}
	if int64(file.Len()-before) != seg {
		t.Fatalf("appended %d bytes, SnapshotSegmentSize says %d", file.Len()-before, seg)
	}
	want = append(want, append(keep(from), seq.Len())...)
	got2 := must(m.ReadSnapshot(bytes.NewReader(file.Bytes()), opt))
	defer got2.Close()
	if p := ckptPositions(got2); !slices.Equal(p, want) {
		t.Fatalf("restored checkpoints after the follow-up %v, want %v (of %v)", p, want, all)
	}

	// A cut between two restored checkpoints resumes from the earlier.
	cut := want[len(want)-3] + 1
	if err := got2.Truncate(cut); err != nil {
		t.Fatal(err)
	}
	if r := got2.Reused(); r != want[len(want)-3] {
		t.Errorf("Reused() = %d after a cut to %d of a restored sequence with checkpoints %v", r, cut, want)
	}
	more := snapTokens(5, vocab, 21)
	if err := got2.Feed(ctx, more); err != nil {
		t.Fatal(err)
	}
	sameFloats(t, "cut after the restore", got2.Logits(), coldLogits(t, m, append(slices.Clone(seq.Tokens()[:cut]), more...)))
}
