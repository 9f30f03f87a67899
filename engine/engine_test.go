package engine

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/churon/churon/engine/chat"
	"github.com/churon/churon/engine/quant"
	"github.com/churon/churon/engine/sample"
	"github.com/churon/churon/engine/tokenizer"
	"github.com/churon/churon/internal/testdata"
	"github.com/churon/churon/models/synth"
)

func synthModel(t *testing.T, s synth.Spec) *Model {
	t.Helper()
	return loadModel(t, synthFile(t, s.Arch+".gguf", s))
}

// synthFile writes the synthetic model s as name in a new temporary
// directory and returns its path.
func synthFile(tb testing.TB, name string, s synth.Spec) string {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), name)
	if err := synth.Write(path, s); err != nil {
		tb.Fatal(err)
	}
	return path
}

var greedy = sample.Greedy()

func TestInfo(t *testing.T) {
	s := synth.Tiny("qwen2")
	s.Type = quant.Q8_0
	m := synthModel(t, s)
	in := m.Info()
	if in.Architecture != "qwen2" || in.Layers != s.Layers || in.Embedding != s.Embd || in.VocabSize != s.Vocab {
		t.Errorf("info %+v does not describe %+v", in, s)
	}
	if !in.HasTemplate || in.FileType != "Q8_0" || in.QuantMix["Q8_0"] == 0 || in.QuantMix["F32"] == 0 {
		t.Errorf("template %v, file type %q, mix %v", in.HasTemplate, in.FileType, in.QuantMix)
	}
	// embd + output + 7 matrices per layer, plus the norms and biases.
	wantParams := int64(2*s.Embd*s.Vocab + s.Embd)
	hd := s.Embd / s.Heads
	kv := s.KVHeads * hd
	perLayer := 2*s.Embd + s.Embd*s.Embd*2 + 2*s.Embd*kv + s.Embd + 2*kv + 3*s.Embd*s.FF
	wantParams += int64(s.Layers * perLayer)
	if in.Parameters != wantParams {
		t.Errorf("parameters %d, want %d", in.Parameters, wantParams)
	}
	if in.FileBytes <= in.WeightBytes || in.WeightBytes <= 0 {
		t.Errorf("file %d bytes, weights %d bytes", in.FileBytes, in.WeightBytes)
	}
}

func TestLoadCancelledAndBadFiles(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	path := synthFile(t, "m.gguf", synth.Tiny("llama"))
	if _, err := Load(ctx, path, LoadOptions{InMemory: true}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled load: %v", err)
	}
	if _, err := Load(context.Background(), filepath.Join(t.TempDir(), "missing.gguf"), LoadOptions{}); err == nil {
		t.Error("missing file loaded")
	}
	var fractions []float64
	m, err := Load(context.Background(), path, LoadOptions{InMemory: true, Progress: func(f float64) { fractions = append(fractions, f) }})
	if err != nil {
		t.Fatal(err)
	}
	m.Close()
	if len(fractions) < 2 || fractions[0] != 0 || fractions[len(fractions)-1] != 1 {
		t.Errorf("progress %v: want 0 … 1", fractions)
	}
}

// TestInMemoryEqualsMapped: both load modes give identical logits.
func TestInMemoryEqualsMapped(t *testing.T) {
	s := synth.Tiny("qwen3")
	s.Type = quant.Q4_0
	path := synthFile(t, "m.gguf", s)
	var rows [2][]float32
	for i, inMem := range []bool{false, true} {
		m, err := Load(context.Background(), path, LoadOptions{InMemory: inMem})
		if err != nil {
			t.Fatal(err)
		}
		seq, err := m.NewSequence(SequenceOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if rows[i], err = seq.FeedAll(context.Background(), []int32{1, 300, 301, 302}); err != nil {
			t.Fatal(err)
		}
		m.Close()
	}
	for i := range rows[0] {
		if rows[0][i] != rows[1][i] {
			t.Fatalf("logit %d: mapped %v, in memory %v", i, rows[0][i], rows[1][i])
		}
	}
}

// TestIncrementalFeedEqualsBatch: feeding token by token, in odd batches,
// or after truncating and re-feeding gives the same logits as one batch.
func TestIncrementalFeedEqualsBatch(t *testing.T) {
	m := synthModel(t, synth.Tiny("llama"))
	toks := []int32{1, 300, 17, 299, 5, 260, 261, 42, 100}
	ctx := context.Background()
	ref, _ := m.NewSequence(SequenceOptions{KVType: KVF32})
	want, err := ref.FeedAll(ctx, toks)
	if err != nil {
		t.Fatal(err)
	}
	v := m.Info().VocabSize
	last := want[(len(toks)-1)*v:]
	for _, batch := range []int{1, 2, 5} {
		seq, _ := m.NewSequence(SequenceOptions{KVType: KVF32, Batch: batch})
		if err := seq.Feed(ctx, toks); err != nil {
			t.Fatal(err)
		}
		assertClose(t, "batch", seq.Logits(), last)
	}
	seq, _ := m.NewSequence(SequenceOptions{KVType: KVF32})
	if err := seq.Feed(ctx, append(toks[:4:4], 7, 7, 7)); err != nil {
		t.Fatal(err)
	}
	if err := seq.Truncate(4); err != nil {
		t.Fatal(err)
	}
	if err := seq.Feed(ctx, toks[4:]); err != nil {
		t.Fatal(err)
	}
	assertClose(t, "truncated", seq.Logits(), last)
	if seq.Len() != len(toks) {
		t.Errorf("len %d, want %d", seq.Len(), len(toks))
	}
}

func assertClose(t *testing.T, what string, got, want []float32) {
	t.Helper()
	for i := range want {
		d := got[i] - want[i]
		if d > 1e-4 || d < -1e-4 {
			t.Fatalf("%s: logit %d = %v, want %v", what, i, got[i], want[i])
		}
	}
}

func TestGenerateStops(t *testing.T) {
	m := synthModel(t, synth.Tiny("llama"))
	ctx := context.Background()
	prompt := m.TokenizePrompt("Once upon a time", true, false)

	t.Run("length", func(t *testing.T) {
		seq, _ := m.NewSequence(SequenceOptions{})
		var streamed strings.Builder
		n := 0
		res, err := seq.Generate(ctx, prompt, GenerateOptions{MaxTokens: 12, IgnoreEOS: true, Sampling: greedy}, func(tk Token) error {
			if !utf8.ValidString(tk.Text) {
				t.Errorf("invalid UTF-8 piece %q", tk.Text)
			}
			streamed.WriteString(tk.Text)
			n++
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if res.Finish != FinishLength || len(res.Tokens) != 12 {
			t.Errorf("finish %s after %d tokens", res.Finish, len(res.Tokens))
		}
		if streamed.String() != res.Text {
			t.Errorf("streamed %q, result %q", streamed.String(), res.Text)
		}
		if res.TTFT <= 0 || res.PromptTPS <= 0 || res.GenTPS <= 0 {
			t.Errorf("stats %+v", res)
		}
		if seq.Len() != len(prompt)+11 {
			t.Errorf("cache holds %d tokens, want prompt + 11 fed back", seq.Len())
		}
	})
	t.Run("same seed same text", func(t *testing.T) {
		p := sample.DefaultParams()
		p.Seed = 42
		var texts [2]string
		for i := range texts {
			seq, _ := m.NewSequence(SequenceOptions{})
			res, err := seq.Generate(ctx, prompt, GenerateOptions{MaxTokens: 16, IgnoreEOS: true, Sampling: p}, nil)
			if err != nil {
				t.Fatal(err)
			}
			texts[i] = res.Text
		}
		if texts[0] != texts[1] {
			t.Errorf("seeded runs differ: %q vs %q", texts[0], texts[1])
		}
	})
	t.Run("stop string", func(t *testing.T) {
		seq, _ := m.NewSequence(SequenceOptions{})
		full, err := seq.Generate(ctx, prompt, GenerateOptions{MaxTokens: 24, IgnoreEOS: true, Sampling: greedy}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(full.Text) < 6 {
			t.Skipf("greedy text %q too short to cut", full.Text)
		}
		stop := full.Text[3:6]
		seq, _ = m.NewSequence(SequenceOptions{})
		res, err := seq.Generate(ctx, prompt, GenerateOptions{MaxTokens: 24, IgnoreEOS: true, Sampling: greedy, Stop: []string{stop}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		want := full.Text[:strings.Index(full.Text, stop)]
		if res.Finish != FinishStop || res.Text != want {
			t.Errorf("finish %s text %q, want stop with %q", res.Finish, res.Text, want)
		}
	})
	t.Run("cancel", func(t *testing.T) {
		cctx, cancel := context.WithCancel(ctx)
		seq, _ := m.NewSequence(SequenceOptions{})
		n := 0
		res, err := seq.Generate(cctx, prompt, GenerateOptions{IgnoreEOS: true, Sampling: greedy}, func(Token) error {
			n++
			if n == 3 {
				cancel()
			}
			return nil
		})
		if err != nil || res.Finish != FinishCancelled || len(res.Tokens) != 3 {
			t.Errorf("err %v finish %s tokens %d: want cancelled after 3", err, res.Finish, len(res.Tokens))
		}
	})
	t.Run("context full", func(t *testing.T) {
		seq, _ := m.NewSequence(SequenceOptions{Context: len(prompt) + 5})
		res, err := seq.Generate(ctx, prompt, GenerateOptions{IgnoreEOS: true, Sampling: greedy}, nil)
		if err != nil || res.Finish != FinishContext || len(res.Tokens) != 6 {
			t.Errorf("err %v finish %s tokens %d", err, res.Finish, len(res.Tokens))
		}
		long := make([]int32, 40)
		seq2, _ := m.NewSequence(SequenceOptions{Context: 16})
		if _, err := seq2.Generate(ctx, long, GenerateOptions{Sampling: greedy}, nil); !errors.Is(err, ErrContextFull) {
			t.Errorf("prompt over the context: %v", err)
		}
	})
	t.Run("callback error", func(t *testing.T) {
		boom := errors.New("boom")
		seq, _ := m.NewSequence(SequenceOptions{})
		_, err := seq.Generate(ctx, prompt, GenerateOptions{MaxTokens: 5, IgnoreEOS: true, Sampling: greedy}, func(Token) error { return boom })
		if !errors.Is(err, boom) {
			t.Errorf("err %v", err)
		}
	})
	t.Run("bad token", func(t *testing.T) {
		seq, _ := m.NewSequence(SequenceOptions{})
		if err := seq.Feed(ctx, []int32{1, 99999}); err == nil {
			t.Error("out-of-vocabulary token accepted")
		}
	})
}

func TestChatTokens(t *testing.T) {
	m := synthModel(t, synth.Tiny("qwen2"))
	ids, text, err := m.ChatTokens(context.Background(), []chat.Message{{Role: "user", Content: "안녕하세요"}})
	if err != nil {
		t.Fatal(err)
	}
	want := "<|im_start|>user\n안녕하세요<|im_end|>\n<|im_start|>assistant\n"
	if text != want {
		t.Errorf("rendered %q, want %q", text, want)
	}
	// SentencePiece adds a space before the text; decoding keeps it.
	if got := m.Tokenizer().Decode(ids[1:], tokenizer.DecodeOptions{}); strings.TrimPrefix(got, " ") != want {
		t.Errorf("tokens decode to %q", got)
	}

	s := synth.Tiny("llama")
	s.NoTemplate = true
	plain := synthModel(t, s)
	if plain.Info().HasTemplate {
		t.Error("HasTemplate without a template")
	}
	if !plain.Template().IsFallback() {
		t.Error("no fallback template")
	}
}

// TestLoadMemoryEqualsFile: a model held in memory (the built-in demo's
// way) loads and computes as the same file opened from disk, names itself
// as told, and refuses bytes that are not a model.
func TestLoadMemoryEqualsFile(t *testing.T) {
	path := filepath.Join(testdata.Dir(t), "models", "stories260K.gguf")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	mem, err := LoadMemory(context.Background(), "builtin:stories", data, LoadOptions{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	in := mem.Info()
	if in.Path != "builtin:stories" || in.FileBytes != int64(len(data)) || in.Architecture != "llama" {
		t.Fatalf("info %+v", in)
	}
	disk := loadModel(t, path)
	prompt := []int32{1, 403, 407, 9, 30}
	var got [2][]float32
	for i, m := range []*Model{mem, disk} {
		s := must(m.NewSequence(SequenceOptions{Context: 64}))
		got[i] = must(s.FeedAll(context.Background(), prompt))
	}
	sameFloats(t, "logits", got[0], got[1])
	if mem.Identity() != disk.Identity() {
		t.Error("the identity differs between memory and file")
	}
	if _, err := LoadMemory(context.Background(), "junk", []byte("not a model"), LoadOptions{}); err == nil || !strings.Contains(err.Error(), "junk") {
		t.Fatalf("junk: %v", err)
	}
}
