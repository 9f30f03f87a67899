package compare

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	api "github.com/churon/churon/app/api/compare"
	"github.com/churon/churon/engine"
	"github.com/churon/churon/engine/gguf"
	"github.com/churon/churon/engine/sample"
	"github.com/churon/churon/engine/tokenizer"
)

func TestSelfComparisonIsExact(t *testing.T) {
	f16 := tinyModel(t, "F16", 320, false)
	scratch := t.TempDir()
	res, err := Run(context.Background(), api.Options{
		Models: []string{f16, f16}, Prompt: "Tell me about the sea.", Sampling: greedy(24), TextTokens: 48, ScratchDir: scratch,
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if left, _ := os.ReadDir(scratch); len(left) != 0 {
		t.Errorf("scratch files left behind: %v", left)
	}
	if res.Reference != 0 || len(res.Models) != 2 {
		t.Fatalf("reference %d, %d models", res.Reference, len(res.Models))
	}
	a, b := res.Models[0], res.Models[1]
	if a.Output != b.Output || len(a.Tokens) != 24 {
		t.Errorf("same model, same seed: outputs differ or short:\n%q\n%q", a.Output, b.Output)
	}
	for _, m := range res.Models {
		q := m.Quality
		if q == nil {
			t.Fatalf("%s: no quality", m.File)
		}
		if q.KLDMean != 0 || q.KLDP99 != 0 || q.KLDMax != 0 || q.Top1Agreement != 1 || q.PPLRatio != 1 || q.DeltaPMean != 0 {
			t.Errorf("self comparison: %+v", q.Summary)
		}
		if want := 24 + 2*47; q.Tokens != want {
			t.Errorf("scored %d positions, want %d (answer 24 + two texts of 48 tokens)", q.Tokens, want)
		}
		if len(q.Answer.KLD) != 24 || len(q.Answer.Disagreements) != 0 || len(q.Texts) != 2 {
			t.Errorf("answer segment %d positions, %d disagreements, %d texts", len(q.Answer.KLD), len(q.Answer.Disagreements), len(q.Texts))
		}
		if q.PPL <= 1 || math.IsInf(q.PPL, 0) {
			t.Errorf("perplexity %v", q.PPL)
		}
	}
	if res.Template != "chat" || !strings.Contains(res.PromptText, "<|im_start|>user\nTell me about the sea.") {
		t.Errorf("template %q, prompt %q", res.Template, res.PromptText)
	}
	// Run again from the result: the same answer and figures.
	again, err := Run(context.Background(), res.Options(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if again.Models[1].Output != b.Output || again.Models[1].Quality.Tokens != b.Quality.Tokens || again.Title != res.Title {
		t.Errorf("rerun differs: %q, %d tokens scored", again.Models[1].Output, again.Models[1].Quality.Tokens)
	}
}

func TestQuantizedAgainstF16(t *testing.T) {
	f16 := tinyModel(t, "F16", 320, false)
	q4 := tinyModel(t, "Q4_0", 320, false)
	// The Q4_0 file first: the reference is chosen by bits per weight.
	res, err := Run(context.Background(), api.Options{
		Models: []string{q4, f16}, Prompt: "Tell me about the sea.", Sampling: greedy(32), TextTokens: 64,
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Reference != 1 || res.Order[0] != 1 || !res.Models[1].Reference {
		t.Fatalf("reference %d (order %v); want the F16 model", res.Reference, res.Order)
	}
	ref, m := res.Models[1], res.Models[0]
	if ref.BPW <= m.BPW || m.BPW < 4 || m.BPW > 6 || ref.BPW < 15 {
		t.Errorf("bits per weight: F16 %.2f, Q4_0 %.2f", ref.BPW, m.BPW)
	}
	q := m.Quality
	if !(q.KLDMean > 0) || !(q.KLDP99 >= q.KLDMean) || !(q.KLDMax >= q.KLDP99) {
		t.Errorf("Q4_0 vs F16: KLD mean %g p99 %g max %g", q.KLDMean, q.KLDP99, q.KLDMax)
	}
	if !(q.Top1Agreement < 1) || q.Top1Agreement < 0.3 {
		t.Errorf("Q4_0 vs F16: top-1 agreement %g", q.Top1Agreement)
	}
	if q.PPLRatio == 1 || q.PPLRatio <= 0 {
		t.Errorf("ppl ratio %g", q.PPLRatio)
	}
	if len(q.Answer.Disagreements) == 0 {
		t.Errorf("no disagreement listed though agreement is %g", q.Answer.Top1Agreement)
	}
	for _, d := range q.Answer.Disagreements {
		if q.Answer.Agree[d.Pos] || d.RefTop == d.ModelTop || d.KLD != q.Answer.KLD[d.Pos] {
			t.Errorf("disagreement %+v does not match the arrays", d)
		}
	}
	if rq := ref.Quality; rq.KLDMean != 0 || rq.Top1Agreement != 1 || rq.PPLRatio != 1 {
		t.Errorf("reference against itself: %+v", rq.Summary)
	}
	// The reference's answer is what the others were scored over.
	if got := len(q.Answer.KLD); got != len(ref.Tokens) {
		t.Errorf("%d answer positions scored, reference answered %d tokens", got, len(ref.Tokens))
	}
	for _, mr := range res.Models {
		if mr.FileBytes <= 0 || mr.Params <= 0 || mr.LoadMs <= 0 || mr.TTFTMs <= 0 || mr.PromptTPS <= 0 || mr.GenTPS <= 0 || mr.RSSBytes <= 0 {
			t.Errorf("%s: missing figures: %+v", mr.Type, mr)
		}
		if strings.Join(mr.Pieces, "") != mr.Output || len(mr.Pieces) != len(mr.Tokens) {
			t.Errorf("%s: %d pieces for %d tokens, joined %q vs %q", mr.Type, len(mr.Pieces), len(mr.Tokens), strings.Join(mr.Pieces, ""), mr.Output)
		}
	}
}

func TestRefusesDifferentVocabularies(t *testing.T) {
	a := tinyModel(t, "F16", 320, false)
	b := tinyModel(t, "F16", 352, false)
	var events []api.Event
	_, err := Run(context.Background(), api.Options{Models: []string{a, b}, Prompt: "hi", Sampling: greedy(4)},
		func(e api.Event) { events = append(events, e) })
	var ve *api.VocabError
	if !errors.Is(err, api.ErrVocabMismatch) || !errors.As(err, &ve) || ve.B != b || !strings.Contains(ve.Detail, "320 tokens vs 352") {
		t.Fatalf("err = %v", err)
	}
	if len(events) != 1 {
		t.Fatalf("events %v: want only Done (nothing loaded)", events)
	}
	if d, ok := events[0].(api.Done); !ok || d.Err != err {
		t.Errorf("last event %#v", events[0])
	}
}

func TestBadArguments(t *testing.T) {
	a := tinyModel(t, "F16", 320, false)
	missing := filepath.Join(t.TempDir(), "nope.gguf")
	for _, c := range []struct {
		name string
		opt  api.Options
		want error
	}{
		{"one model", api.Options{Models: []string{a}, Prompt: "hi"}, api.ErrModelCount},
		{"five models", api.Options{Models: []string{a, a, a, a, a}, Prompt: "hi"}, api.ErrModelCount},
		{"no prompt", api.Options{Models: []string{a, a}, Prompt: "  "}, api.ErrEmptyPrompt},
		{"missing file", api.Options{Models: []string{a, missing}, Prompt: "hi"}, fs.ErrNotExist},
		{"foreign reference", api.Options{Models: []string{a, a}, Prompt: "hi", Ref: missing}, api.ErrReference},
		{"bad KV type", api.Options{Models: []string{a, a}, Prompt: "hi", KV: "q3"}, api.ErrOption},
		{"bad sampler", api.Options{Models: []string{a, a}, Prompt: "hi", Sampling: api.Sampling{Temperature: 1, TopP: 0}}, api.ErrOption},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Run(context.Background(), c.opt, nil)
			if !errors.Is(err, c.want) {
				t.Fatalf("err = %v, want %v", err, c.want)
			}
			if c.want == fs.ErrNotExist && !strings.Contains(err.Error(), missing) {
				t.Errorf("error does not name the file: %v", err)
			}
		})
	}
}

func TestCancelMidRun(t *testing.T) {
	f16 := tinyModel(t, "F16", 320, false)
	q4 := tinyModel(t, "Q4_0", 320, false)
	scratch := t.TempDir()
	h := Start(context.Background(), api.Options{Models: []string{f16, q4}, Prompt: "Go on.", Sampling: greedy(400), TextTokens: -1, ScratchDir: scratch})
	var kinds []string
	timeout := time.After(time.Minute)
loop:
	for {
		select {
		case ev, ok := <-h.Events():
			if !ok {
				break loop
			}
			switch e := ev.(type) {
			case api.Token:
				if e.Model == 1 && e.N == 5 {
					h.Cancel()
				}
			case api.ModelDone:
				kinds = append(kinds, "done")
			}
		case <-timeout:
			t.Fatal("events channel not closed a minute after Cancel")
		}
	}
	res, err := h.Wait()
	if !errors.Is(err, context.Canceled) || res != nil {
		t.Fatalf("Wait = %v, %v; want context.Canceled", res, err)
	}
	if len(kinds) != 1 {
		t.Errorf("%d models finished; want the reference only", len(kinds))
	}
	if left, _ := os.ReadDir(scratch); len(left) != 0 {
		t.Errorf("scratch files left behind: %v", left)
	}
}

func TestEventsInOrder(t *testing.T) {
	f16 := tinyModel(t, "F16", 320, false)
	q4 := tinyModel(t, "Q4_0", 320, false)
	h := Start(context.Background(), api.Options{Models: []string{q4, f16}, Prompt: "Hello", Sampling: greedy(8), TextTokens: 40})
	var seq []string // the events' types, but the many Token and Evaluating
	tokens := map[int]string{}
	var done api.Done
	for ev := range h.Events() {
		switch e := ev.(type) {
		case api.Token:
			tokens[e.Model] += e.Text
			continue
		case api.Evaluating:
			if e.Done > e.Total || e.Total != 8+39+39 {
				t.Errorf("evaluating %+v", e)
			}
			continue
		case api.Planned:
			if e.Reference != 1 || len(e.Models) != 2 {
				t.Errorf("planned %+v", e)
			}
		case api.Done:
			done = e
		}
		seq = append(seq, strings.TrimPrefix(fmt.Sprintf("%T", ev), "compare."))
	}
	want := "Planned ModelLoading ModelLoaded PromptReady Generated QualityReady ModelDone " +
		"ModelLoading ModelLoaded Generated QualityReady ModelDone Done"
	if got := strings.Join(seq, " "); got != want {
		t.Errorf("events:\n got %s\nwant %s", got, want)
	}
	res, err := h.Wait()
	if err != nil || done.Err != nil || done.Result != res {
		t.Fatalf("Wait %v, Done %+v", err, done)
	}
	for i, m := range res.Models {
		if tokens[i] != m.Output {
			t.Errorf("model %d: streamed %q, result %q", i, tokens[i], m.Output)
		}
	}
}

func TestKoreanEndToEnd(t *testing.T) {
	f16 := tinyModel(t, "F16", 320, false)
	q4 := tinyModel(t, "Q4_0", 320, false)
	prompt := "김치찌개 끓이는 법을 알려 주세요."
	res, err := Run(context.Background(), api.Options{Models: []string{f16, q4}, Prompt: prompt, Sampling: greedy(16), TextTokens: 64}, nil)
	if err != nil {
		t.Fatal(err)
	}
	f, err := gguf.Open(f16)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tok, err := tokenizer.FromGGUF(f)
	if err != nil {
		t.Fatal(err)
	}
	// The prompt's tokens decode back to the rendered prompt, which holds
	// the Korean text unchanged.
	back := tok.Decode(res.PromptTokens, tokenizer.DecodeOptions{Special: true})
	if !strings.Contains(res.PromptText, prompt) || !strings.Contains(back, prompt) {
		t.Errorf("prompt %q decodes to %q", res.PromptText, back)
	}
	var ko *api.TextTokens
	for i := range res.Texts {
		if res.Texts[i].Name == "ko" {
			ko = &res.Texts[i]
		}
	}
	if ko == nil || len(ko.Tokens) != 64 {
		t.Fatalf("Korean text not scored: %+v", res.Texts)
	}
	if got := tok.Decode(ko.Tokens, tokenizer.DecodeOptions{}); !strings.HasPrefix(builtinText(t, "ko"), strings.TrimSpace(strings.ToValidUTF8(got, ""))) {
		t.Errorf("Korean text tokens decode to %q", got)
	}
	for _, m := range res.Models {
		if !utf8.ValidString(m.Output) {
			t.Errorf("%s: output is not UTF-8: %q", m.Type, m.Output)
		}
		if len(m.Quality.Texts) != 2 || m.Quality.Texts[1].Name != "ko" || m.Quality.Texts[1].Tokens != 63 {
			t.Errorf("%s: text segments %+v", m.Type, m.Quality.Texts)
		}
	}
}

// TestSlowReaderDoesNotStallTheRun: nobody reads the events until the run
// is over, yet it finishes, and then every event is still delivered, in
// order, ending with Done.
func TestSlowReaderDoesNotStallTheRun(t *testing.T) {
	f16 := tinyModel(t, "F16", 320, false)
	q4 := tinyModel(t, "Q4_0", 320, false)
	h := Start(context.Background(), api.Options{Models: []string{f16, q4}, Prompt: "Hello", Sampling: greedy(12), TextTokens: -1})
	select {
	case <-h.Done():
	case <-time.After(time.Minute):
		t.Fatal("the run waited for its reader")
	}
	res, err := h.Wait()
	if err != nil {
		t.Fatal(err)
	}
	tokens, n := 0, 0
	var last api.Event
	for ev := range h.Events() {
		n++
		last = ev
		if tk, ok := ev.(api.Token); ok && tk.ID >= 0 {
			tokens++
		}
	}
	if d, ok := last.(api.Done); !ok || d.Result != res || tokens != 24 {
		t.Errorf("%d events, %d tokens, last %T", n, tokens, last)
	}
	if len(res.Texts) != 0 || len(res.Models[1].Quality.Texts) != 0 || res.Models[1].Quality.Tokens != 12 {
		t.Errorf("texts scored though TextTokens < 0: %+v", res.Texts)
	}
}

func TestSamplingRoundTrip(t *testing.T) {
	o := engine.GenerateOptions{MaxTokens: 77, Sampling: sample.Greedy(), IgnoreEOS: true}
	o.Sampling.Temperature, o.Sampling.TopP, o.Sampling.MinP, o.Sampling.Seed = 0.8, 0.95, 0.05, 1<<60
	o.Stop = []string{"\n\n"}
	s := SamplingOf(o)
	if s.Temperature != 0.8 || s.TopP != 0.95 || s.MinP != 0.05 {
		t.Errorf("float32 settings widened badly: %+v", s)
	}
	back := GenerateOptions(s)
	if back.Sampling != o.Sampling || back.MaxTokens != 77 || back.Stop[0] != "\n\n" || !back.IgnoreEOS {
		t.Errorf("round trip: %+v\nwant %+v", back, o)
	}
}

func TestSummaryFigures(t *testing.T) {
	// Four positions with known values.
	ps := []position{
		{kld: 0.1, dp: -0.2, nllM: 2, nllR: 1, topM: 5, topR: 5},
		{kld: 0.3, dp: 0.1, nllM: 1, nllR: 1, topM: 4, topR: 5},
		{kld: 0.0, dp: 0, nllM: 3, nllR: 2, topM: 1, topR: 1},
		{kld: 0.2, dp: 0.1, nllM: 2, nllR: 2, topM: 9, topR: 9},
	}
	s := summarize(ps)
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-12 }
	// p99 of {0, .1, .2, .3}: rank 0.99·3 = 2.97 → .2 + .97·.1.
	if s.Tokens != 4 || !near(s.KLDMean, 0.15) || !near(s.KLDP99, 0.297) || s.KLDMax != 0.3 ||
		s.Top1Agreement != 0.75 || !near(s.PPLRatio, math.Exp(0.5)) || !near(s.PPL, math.Exp(2)) ||
		!near(s.RefPPL, math.Exp(1.5)) || !near(s.DeltaPMean, 0) {
		t.Errorf("%+v", s)
	}
	if z := summarize(nil); z != (api.Summary{}) {
		t.Errorf("empty: %+v", z)
	}
	// A row against itself scores exactly zero; a shifted row (same
	// distribution) too, up to rounding; a different one more.
	ref := []float32{1, 2, 3, 0.5}
	lse, top, err := logSoftmaxNorm(ref)
	if err != nil || top != 2 {
		t.Fatal(top, err)
	}
	if p, _ := score(ref, lse, top, ref, 1); p.kld != 0 || p.dp != 0 || p.nllM != p.nllR {
		t.Errorf("self: %+v", p)
	}
	shifted := []float32{11, 12, 13, 10.5}
	if p, _ := score(ref, lse, top, shifted, 1); math.Abs(p.kld) > 1e-15 {
		t.Errorf("shifted: %+v", p)
	}
	// KL(p‖q) for p = softmax(ref), q uniform: log 4 − H(p).
	var h float64
	for _, v := range ref {
		lp := float64(v) - lse
		h -= math.Exp(lp) * lp
	}
	if p, _ := score(ref, lse, top, []float32{0, 0, 0, 0}, 1); !near(p.kld, math.Log(4)-h) || p.topM != 0 {
		t.Errorf("uniform: %+v, want KLD %g", p, math.Log(4)-h)
	}
	if _, err := score(ref, lse, top, []float32{0, float32(math.NaN()), 0, 0}, 1); !errors.Is(err, api.ErrBadLogits) {
		t.Errorf("NaN logits: %v", err)
	}
}

// builtinText is the built-in text named name.
func builtinText(t *testing.T, name string) string {
	t.Helper()
	for _, b := range api.Texts {
		if b.Name == name {
			return b.Text
		}
	}
	t.Fatalf("no built-in text %q", name)
	return ""
}

// TestRunnerHoldsTheMachine: a Runner with Exclusive holds the machine
// before the comparison's first event and hands it back once it has
// ended; a comparison that cannot have it does not run.
func TestRunnerHoldsTheMachine(t *testing.T) {
	f16 := tinyModel(t, "F16", 320, false)
	var held, released atomic.Int32
	r := Runner{Exclusive: func(context.Context) (func(), error) {
		held.Add(1)
		return func() { released.Add(1) }, nil
	}}
	h := r.Start(context.Background(), api.Options{Models: []string{f16, f16}, Prompt: "Hello", Sampling: greedy(4), TextTokens: -1})
	first := true
	for range h.Events() {
		if first && held.Load() != 1 {
			t.Fatalf("the comparison's first event came before it held the machine")
		}
		first = false
	}
	if _, err := h.Wait(); err != nil {
		t.Fatal(err)
	}
	if held.Load() != 1 || released.Load() != 1 {
		t.Fatalf("held %d times, released %d", held.Load(), released.Load())
	}
	busy := errors.New("closed")
	h = Runner{Exclusive: func(context.Context) (func(), error) { return nil, busy }}.Start(context.Background(),
		api.Options{Models: []string{f16, f16}, Prompt: "Hello", Sampling: greedy(4), TextTokens: -1})
	if _, err := h.Wait(); !errors.Is(err, busy) {
		t.Fatalf("without the machine: %v", err)
	}
}
