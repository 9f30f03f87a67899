package engine

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/churon/churon/models/fit"
	"github.com/churon/churon/models/synth"
)

// recurrentModel loads a small qwen35 (three Gated DeltaNet layers and
// one attention layer).
func recurrentModel(t *testing.T, shape string) *Model {
	t.Helper()
	s, err := synth.Preset(shape, "F16", 3)
	if err != nil {
		t.Fatal(err)
	}
	return loadModel(t, synthFile(t, shape+".gguf", s))
}

// coldLogits feeds toks to a fresh sequence and returns its logits.
func coldLogits(t *testing.T, m *Model, toks []int32) []float32 {
	t.Helper()
	s, err := m.NewSequence(SequenceOptions{Context: 4096})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Feed(context.Background(), toks); err != nil {
		t.Fatal(err)
	}
	return append([]float32(nil), s.Logits()...)
}

// TestRecurrentTruncate: after a 100-token prompt, cutting a qwen35
// sequence anywhere and feeding on gives the logits of a cold prefill of
// the same tokens, bit for bit — a follow-up (no cut), a regeneration (a
// cut just before the prompt's last token, a turn boundary), cuts on and
// between checkpoints, before the first one (no checkpoint: the states
// start from zero) and to nothing — and runs again only the tokens after
// the checkpoint it resumes from, as Reused says.
func TestRecurrentTruncate(t *testing.T) {
	m := recurrentModel(t, "qwen35-test")
	ctx := context.Background()
	prompt := snapTokens(100, m.Info().VocabSize, 5)
	more := snapTokens(10, m.Info().VocabSize, 6)
	for _, tc := range []struct{ cut, reused int }{
		{100, 100}, {99, 99}, {64, 64}, {57, 48}, {16, 16}, {15, 0}, {3, 0}, {0, 0},
	} {
		t.Run(fmt.Sprint(tc.cut), func(t *testing.T) {
			s, err := m.NewSequence(SequenceOptions{Context: 512, Batch: 24, CheckpointEvery: 16})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if err := s.Feed(ctx, prompt); err != nil {
				t.Fatal(err)
			}
			if err := s.Truncate(tc.cut); err != nil {
				t.Fatal(err)
			}
			if got := s.Reused(); got != tc.reused {
				t.Errorf("Reused() = %d after a cut to %d, want %d", got, tc.cut, tc.reused)
			}
			if s.Refills() != (tc.cut < len(prompt)) {
				t.Errorf("Refills() = %v after a cut to %d of %d", s.Refills(), tc.cut, len(prompt))
			}
			before := m.rowsRun
			if err := s.Feed(ctx, more); err != nil {
				t.Fatal(err)
			}
			if ran, want := m.rowsRun-before, int64(tc.cut-tc.reused+len(more)); ran != want {
				t.Errorf("the feed after a cut to %d ran %d rows, want %d (from the checkpoint at %d)", tc.cut, ran, want, tc.reused)
			}
			want := coldLogits(t, m, append(append([]int32(nil), prompt[:tc.cut]...), more...))
			sameFloats(t, fmt.Sprintf("cut to %d, then 10 tokens", tc.cut), s.Logits(), want)
			// Cut again after the feed: the checkpoints taken on the way
			// serve as well.
			if err := s.Truncate(tc.cut + 5); err != nil {
				t.Fatal(err)
			}
			if err := s.Feed(ctx, more[:3]); err != nil {
				t.Fatal(err)
			}
			want = coldLogits(t, m, append(append(append([]int32(nil), prompt[:tc.cut]...), more[:5]...), more[:3]...))
			sameFloats(t, fmt.Sprintf("cut to %d, 10 tokens, cut to %d, 3 tokens", tc.cut, tc.cut+5), s.Logits(), want)
		})
	}
}

// TestRecurrentStreams: batched Step on a qwen35 sequence that was cut
// back (its stream rewinds to a checkpoint and feeds the rest as the
// start of its prompt) beside a fresh one, and a further cut into what
// Step generated (checkpointed on the way), give exactly the answers of
// cold sequences.
func TestRecurrentStreams(t *testing.T) {
	m := recurrentModel(t, "qwen35-test")
	ctx := context.Background()
	vocab := m.Info().VocabSize
	prompt, more, other := snapTokens(50, vocab, 1), snapTokens(5, vocab, 2), snapTokens(30, vocab, 3)
	opt := GenerateOptions{MaxTokens: 20, Sampling: greedy, IgnoreEOS: true}
	cold := func(toks []int32) Result {
		s := must(m.NewSequence(SequenceOptions{Context: 512}))
		defer s.Close()
		res, err := s.Generate(ctx, toks, opt, nil)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	a := must(m.NewSequence(SequenceOptions{Context: 512, Batch: 7, CheckpointEvery: 16}))
	b := must(m.NewSequence(SequenceOptions{Context: 512, Batch: 7, CheckpointEvery: 16}))
	if err := a.Feed(ctx, prompt); err != nil {
		t.Fatal(err)
	}
	if err := a.Truncate(40); err != nil {
		t.Fatal(err)
	}
	// c is cut back before its first checkpoint: its stream starts from
	// zero states, with no checkpoint to restore.
	c := must(m.NewSequence(SequenceOptions{Context: 512, Batch: 7, CheckpointEvery: 16}))
	if err := c.Feed(ctx, prompt[:10]); err != nil {
		t.Fatal(err)
	}
	if err := c.Truncate(5); err != nil {
		t.Fatal(err)
	}
	if c.Reused() != 0 {
		t.Errorf("Reused() = %d before any checkpoint", c.Reused())
	}
	sa := must(a.NewStream(more, opt, nil))
	sb := must(b.NewStream(other, opt, nil))
	sc := must(c.NewStream(more, opt, nil))
	for step := 0; !sa.Done() || !sb.Done() || !sc.Done(); step++ {
		if step > 200 {
			t.Fatal("the streams did not end")
		}
		if err := m.Step([]*Stream{sa, sb, sc}, 6); err != nil {
			t.Fatal(err)
		}
	}
	head := append(append([]int32(nil), prompt[:40]...), more...)
	for i, c := range []struct {
		st     *Stream
		prompt []int32
	}{{sa, head}, {sb, other}, {sc, append(slices.Clone(prompt[:5]), more...)}} {
		got, err := c.st.Result()
		if err != nil {
			t.Fatal(err)
		}
		if want := cold(c.prompt); !slices.Equal(got.Tokens, want.Tokens) {
			t.Errorf("stream %d: %v, cold %v", i, got.Tokens, want.Tokens)
		}
	}
	// Cut into the answer: positions 45 … 64 were generated, 48 and 64
	// checkpointed while decoding.
	res, _ := sa.Result()
	if err := a.Truncate(52); err != nil {
		t.Fatal(err)
	}
	if got := a.Reused(); got != 48 {
		t.Errorf("Reused() = %d after a cut to 52 into a generated answer, want 48", got)
	}
	again := append(append([]int32(nil), head...), res.Tokens[:52-len(head)]...)
	got, err := a.Generate(ctx, nil, opt, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := cold(again); !slices.Equal(got.Tokens, want.Tokens) {
		t.Errorf("after a cut into the answer: %v, cold %v", got.Tokens, want.Tokens)
	}
}

// TestRecurrentSnapshot: a qwen35 sequence written to a snapshot — whole,
// then as appended segments after a follow-up and after an edit —
// restores in a model loaded anew with its tokens, logits, recurrent
// states and checkpoints: it goes on exactly as the sequence it was, and
// a cut after the restore resumes from a restored checkpoint. A stale
// sequence (cut, not fed) is not written; a snapshot of the format
// before recurrent states, or damaged, is refused.
func TestRecurrentSnapshot(t *testing.T) {
	s, err := synth.Preset("qwen35-test", "Q8_0", 3)
	if err != nil {
		t.Fatal(err)
	}
	path := synthFile(t, "q35.gguf", s)
	m := loadModel(t, path)
	ctx := context.Background()
	opt := SequenceOptions{Context: 512, CheckpointEvery: 16}
	vocab := m.Info().VocabSize
	seq := must(m.NewSequence(opt))
	if err := seq.Feed(ctx, snapTokens(70, vocab, 1)); err != nil {
		t.Fatal(err)
	}
	var file bytes.Buffer
	if err := seq.WriteSnapshot(&file); err != nil {
		t.Fatal(err)
	}
	// A follow-up, then an edit back into it, each saved as a segment.
	if err := seq.Feed(ctx, snapTokens(20, vocab, 2)); err != nil {
		t.Fatal(err)
	}
	if err := seq.WriteSnapshotSegment(&file, 70, nil); err != nil {
		t.Fatal(err)
	}
	if err := seq.Truncate(81); err != nil {
		t.Fatal(err)
	}
	var stale bytes.Buffer
	if err := seq.WriteSnapshotSegment(&stale, 81, nil); err == nil {
		t.Error("a cut sequence whose states are ahead of its tokens was written")
	}
	if err := seq.Feed(ctx, snapTokens(6, vocab, 3)); err != nil {
		t.Fatal(err)
	}
	if err := seq.WriteSnapshotSegment(&file, 81, nil); err != nil {
		t.Fatal(err)
	}
	snap := file.Bytes()

	fresh := loadModel(t, path) // as a new process would
	got, err := fresh.ReadSnapshot(bytes.NewReader(snap), opt)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Tokens(), seq.Tokens()) {
		t.Fatalf("restored %d tokens, want %d", got.Len(), seq.Len())
	}
	sameFloats(t, "restored logits", got.Logits(), seq.Logits())
	more := snapTokens(4, vocab, 4)
	for _, q := range []*Sequence{got, seq} {
		if err := q.Feed(ctx, more); err != nil {
			t.Fatal(err)
		}
	}
	sameFloats(t, "fed after the restore", got.Logits(), seq.Logits())
	// The checkpoints came along: a cut to 57 resumes from 48.
	if err := got.Truncate(57); err != nil {
		t.Fatal(err)
	}
	if r := got.Reused(); r != 48 {
		t.Errorf("Reused() = %d after a cut to 57 of a restored sequence, want 48", r)
	}
	if err := got.Feed(ctx, more); err != nil {
		t.Fatal(err)
	}
	sameFloats(t, "cut after the restore", got.Logits(), coldLogits(t, fresh, append(slices.Clone(seq.Tokens()[:57]), more...)))

	// The format before recurrent states (3: no states' bytes in the
	// header) is refused as a mismatch, naming the reason.
	le := binary.LittleEndian
	hlen := int(le.Uint32(snap[12:]))
	v3 := bytes.Clone(snap[:snapPrefix+hlen-4])
	le.PutUint32(v3[8:], snapFormat3)
	le.PutUint32(v3[12:], uint32(hlen-4))
	for l := range fresh.Info().Layers { // format 3 had no layers without rows
		if off := snapPrefix + hlen - 4 - 4*(fresh.Info().Layers-l); le.Uint32(v3[off:]) == snapNoRows {
			le.PutUint32(v3[off:], 0)
		}
	}
	v3 = le.AppendUint32(v3, crc32.Checksum(v3, castagnoli))
	v3 = append(v3, snap[snapPrefix+hlen+4:]...)
	if _, err := fresh.ReadSnapshot(bytes.NewReader(v3), opt); !errors.Is(err, ErrSnapshotMismatch) || !strings.Contains(err.Error(), "recurrent") {
		t.Errorf("a format 3 snapshot of a recurrent model: %v, want a mismatch naming the recurrent states", err)
	}
	// Damage anywhere is refused, or in the last segment taken as a torn
	// append (the state of the save before it, 90 tokens), never trusted.
	r := rand.New(rand.NewPCG(5, 6))
	for range 60 {
		d := bytes.Clone(snap)
		i := r.IntN(len(d))
		d[i] ^= 1 << r.IntN(8)
		if q, err := fresh.ReadSnapshot(bytes.NewReader(d), opt); err == nil && q.Len() != 90 {
			t.Fatalf("a bit flipped at byte %d of %d: restored %d tokens", i, len(d), q.Len())
		}
	}
	for n := 0; n < len(snap); n += 1 + n/16 {
		q, err := fresh.ReadSnapshot(bytes.NewReader(snap[:n]), opt)
		if err == nil && (q.Len() != 70 && q.Len() != 90) {
			t.Fatalf("cut at byte %d: restored %d tokens, none of the saved states", n, q.Len())
		}
	}
}

// TestRecurrentLongConversation: a conversation of 2,000 tokens in ten
// turns, then an edit in its middle: with the default checkpoints the
// feed after the edit runs at most CheckpointEvery held tokens again, and
// with only four checkpoints kept they stay spread over the conversation
// (the newest kept); either way the logits are a cold prefill's.
func TestRecurrentLongConversation(t *testing.T) {
	m := recurrentModel(t, "qwen35-test")
	ctx := context.Background()
	vocab := m.Info().VocabSize
	for _, tc := range []struct {
		max       int
		worstRedo int
	}{{0, DefaultCheckpointEvery}, {4, 1000}} {
		t.Run(fmt.Sprint("max ", tc.max), func(t *testing.T) {
			s := must(m.NewSequence(SequenceOptions{Context: 4096, MaxCheckpoints: tc.max}))
			defer s.Close()
			var all []int32
			for turn := range 10 {
				toks := snapTokens(200, vocab, uint64(10+turn))
				if err := s.Feed(ctx, toks); err != nil {
					t.Fatal(err)
				}
				all = append(all, toks...)
			}
			limit := tc.max
			if limit == 0 {
				limit = DefaultMaxCheckpoints
			}
			if len(s.ckpts) > limit || s.ckpts[len(s.ckpts)-1].pos < 1999 {
				t.Fatalf("%d checkpoints (at most %d), the newest at %d", len(s.ckpts), limit, s.ckpts[len(s.ckpts)-1].pos)
			}
			if got, want := s.CheckpointBytes(), int64(len(s.ckpts)*s.stateBytes); got != want || s.KVBytes() < got {
				t.Errorf("CheckpointBytes %d, want %d (KVBytes %d)", got, want, s.KVBytes())
			}
			const cut = 1010
			if err := s.Truncate(cut); err != nil {
				t.Fatal(err)
			}
			redo := cut - s.Reused()
			if redo < 0 || redo > tc.worstRedo {
				t.Errorf("an edit at %d runs %d held tokens again (resuming at %d), want at most %d", cut, redo, s.Reused(), tc.worstRedo)
			}
			edit := snapTokens(30, vocab, 99)
			before := m.rowsRun
			if err := s.Feed(ctx, edit); err != nil {
				t.Fatal(err)
			}
			if ran := m.rowsRun - before; ran != int64(redo+len(edit)) {
				t.Errorf("the edit ran %d rows, want %d", ran, redo+len(edit))
			}
			t.Logf("%d checkpoints at %v; the edit at %d ran %d held tokens again", len(s.ckpts), positions(s.ckpts), cut, redo)
			want := coldLogits(t, m, append(slices.Clone(all[:cut]), edit...))
			sameFloats(t, "after the edit", s.Logits(), want)
		})
	}
}

func positions(cps []checkpoint) []int {
	out := make([]int, len(cps))
	for i, c := range cps {
		out[i] = c.pos
	}
	return out
}

// TestFitCountsTheCheckpointsKept: the fit check budgets as many copies of
// a recurrent state as a sequence keeps by default.
func TestFitCountsTheCheckpointsKept(t *testing.T) {
	if fit.RecurrentCheckpoints != DefaultMaxCheckpoints {
		t.Errorf("the fit check counts %d checkpoints, a sequence keeps %d", fit.RecurrentCheckpoints, DefaultMaxCheckpoints)
	}
}
