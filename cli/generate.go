package cli

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/binary"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	apicompare "github.com/churon/churon/app/api/compare"
	"github.com/churon/churon/app/compare"
	"github.com/churon/churon/app/session"
	"github.com/churon/churon/assets/demo"
	"github.com/churon/churon/engine"
	"github.com/churon/churon/engine/chat"
	"github.com/churon/churon/engine/sample"
	"github.com/churon/churon/internal/units"
	"github.com/churon/churon/models/header"
	"github.com/churon/churon/models/library"
)

func init() {
	register("generate", "one completion from a prompt (streamed; --json for a summary)", runGenerate)
}

// modelFlags are shared by every command that loads a model.
type modelFlags struct {
	path     string
	threads  int
	ctxLen   int
	kv       string
	inMemory bool
	ubatch   int
	dev      deviceFlags
}

func (f *modelFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.path, "m", "", "model `file` (GGUF)")
	fs.IntVar(&f.threads, "t", 0, "CPU threads (0 = all)")
	fs.IntVar(&f.ctxLen, "c", 0, "context length in tokens (0 = model's, at most 4096)")
	fs.StringVar(&f.kv, "kv", "f16", "KV cache type: f16, f32 or q8_0 (half the memory of f16, slightly less exact)")
	fs.BoolVar(&f.inMemory, "no-mmap", false, "read weights into memory instead of mapping the file")
	fs.IntVar(&f.ubatch, "ub", 0, fmt.Sprintf("prompt tokens per forward pass (0 = %d); on CPUs with AMX the split can change the last bits of logits", engine.DefaultBatch))
	f.dev.register(fs)
}

func (f *modelFlags) load(ctx context.Context) (*engine.Model, error) {
	if f.path == "" {
		return nil, usagef("a model is required: -m FILE.gguf")
	}
	if err := localOnly(f.path); err != nil {
		return nil, err
	}
	kv, err := kvType(f.kv)
	if err != nil {
		return nil, err
	}
	opt := engine.LoadOptions{Threads: f.threads, InMemory: f.inMemory, Context: f.ctxLen, KVType: kv, Batch: f.ubatch}
	if err := f.dev.apply(&opt); err != nil {
		return nil, err
	}
	if demo.IsPath(f.path) {
		return engine.LoadMemory(ctx, demo.Path, demo.Bytes(), opt)
	}
	m, err := engine.Load(ctx, f.path, opt)
	return m, withPath(f.path, err)
}

// orDemo picks the built-in demo model when no -m was given and the
// library holds no model, saying so in one line on stderr; with models in
// the library it asks for -m, as a person has a real model to name.
func (f *modelFlags) orDemo(ctx context.Context, stderr io.Writer) error {
	if f.path != "" {
		return nil
	}
	dir := libraryDir("")
	lib, err := library.Open(dir, header.Local)
	if err != nil {
		return fmt.Errorf("a model is required: -m FILE.gguf (the library at %s cannot be read: %w)", dir, err)
	}
	ms, err := lib.List(ctx)
	if err != nil {
		return fmt.Errorf("a model is required: -m FILE.gguf (the library at %s cannot be listed: %w)", dir, err)
	}
	if len(ms) > 0 {
		return usagef("a model is required: -m FILE.gguf (your library has %d; 'churon models' lists them)", len(ms))
	}
	f.path = demo.Path
	fmt.Fprintf(stderr, "churon: no model given and none in the library: using the built-in demo, %s, a tiny English story model (-m FILE.gguf for a real one)\n", demo.Name)
	return nil
}

func (f *modelFlags) sequence(m *engine.Model) (*engine.Sequence, error) {
	kv, err := kvType(f.kv)
	if err != nil {
		return nil, err
	}
	if f.ubatch < 0 {
		return nil, usagef("-ub %d: want a positive number of tokens", f.ubatch)
	}
	opt := engine.SequenceOptions{Context: f.ctxLen, KVType: kv, Batch: f.ubatch}
	return m.NewSequence(opt)
}

// promptFlags turn text into the token ids to feed.
type promptFlags struct {
	prompts  stringList
	system   string
	raw      bool
	noBOS    bool
	special  bool
	tokenIDs string
}

func (p *promptFlags) register(fs *flag.FlagSet) {
	fs.Var(&p.prompts, "p", "prompt `text`")
	fs.StringVar(&p.system, "system", "", "system prompt (chat template only)")
	fs.BoolVar(&p.raw, "raw", false, "use the prompt as is, without the chat template")
	fs.BoolVar(&p.noBOS, "no-bos", false, "do not add the beginning-of-sequence token")
	fs.BoolVar(&p.special, "parse-special", false, "with --raw: turn special-token text such as <|im_start|> into its token")
}

// tokens returns the prompt's ids and the text they came from.
func (p *promptFlags) tokens(ctx context.Context, m *engine.Model, prompt string) ([]int32, string, error) {
	if p.raw {
		return m.TokenizePrompt(prompt, !p.noBOS, p.special), prompt, nil
	}
	var msgs []chat.Message
	if p.system != "" {
		msgs = append(msgs, chat.Message{Role: "system", Content: p.system})
	}
	msgs = append(msgs, chat.Message{Role: "user", Content: prompt})
	text, err := m.RenderChat(ctx, msgs, true)
	if err != nil {
		return nil, "", err
	}
	return m.TokenizePrompt(text, !p.noBOS, true), text, nil
}

type samplingFlags struct {
	n                      int
	temp, topP, minP       float64
	topK                   int
	repeat, presence, freq float64
	window                 int
	seed                   int64
	stops                  stringList
	ignoreEOS              bool
}

// samplingDefaults are the values the sampling flags start from. They
// are read from the services the window uses, never written here again,
// so that the command line and the window cannot drift apart.
type samplingDefaults struct {
	n                      int
	temp, topP, minP       float32
	topK                   int
	repeat, presence, freq float32
	window                 int
	seed                   int64
}

// chatDefaults are the window's chat defaults (session.DefaultSettings:
// llama.cpp's sampler with ollama's repeat penalty 1.1), with the answer
// capped at 256 tokens where the window lets it run: in a terminal an
// answer that fills the context is rarely what was wanted.
func chatDefaults() samplingDefaults {
	s := session.DefaultSettings()
	return samplingDefaults{n: 256, temp: s.Temperature, topK: s.TopK, topP: s.TopP, minP: s.MinP,
		repeat: s.RepeatPenalty, presence: s.PresencePenalty, freq: s.FrequencyPenalty, window: s.RepeatLastN, seed: s.Seed}
}

// generateDefaults are the comparison's defaults (compare.DefaultSampling,
// which the window's compare page starts from too): the chat sampler
// without the repeat penalty, as in llama.cpp, so that `--temp 0` is plain
// greedy decoding; 256 tokens; a random seed that is reported.
func generateDefaults() samplingDefaults {
	s := compare.DefaultSampling()
	return samplingDefaults{n: s.MaxTokens, temp: float32(s.Temperature), topK: s.TopK, topP: float32(s.TopP), minP: float32(s.MinP),
		repeat: float32(s.RepeatPenalty), presence: float32(s.PresencePenalty), freq: float32(s.FrequencyPenalty), window: s.PenaltyWindow, seed: -1}
}

// compareDefaults are generate's with the Compare page's own fields
// (greedy, 128 tokens, seed 1: compare.Page*), so that a comparison run
// in the terminal and one run in the window answer alike.
func compareDefaults() samplingDefaults {
	d := generateDefaults()
	d.n, d.temp, d.seed = apicompare.PageMaxTokens, apicompare.PageTemperature, apicompare.PageSeed
	return d
}

func (s *samplingFlags) register(fs *flag.FlagSet, d samplingDefaults) {
	fs.IntVar(&s.n, "n", d.n, "maximum tokens to generate (0 = until the model stops or the context is full)")
	fs.Float64Var(&s.temp, "temp", units.Decimal(d.temp), "temperature (0 = greedy)")
	fs.IntVar(&s.topK, "top-k", d.topK, "top-k (0 = off)")
	fs.Float64Var(&s.topP, "top-p", units.Decimal(d.topP), "top-p (1 = off)")
	fs.Float64Var(&s.minP, "min-p", units.Decimal(d.minP), "min-p (0 = off)")
	fs.Float64Var(&s.repeat, "repeat-penalty", units.Decimal(d.repeat), "repetition penalty (1 = off)")
	fs.Float64Var(&s.presence, "presence-penalty", units.Decimal(d.presence), "presence penalty (0 = off)")
	fs.Float64Var(&s.freq, "frequency-penalty", units.Decimal(d.freq), "frequency penalty (0 = off)")
	fs.IntVar(&s.window, "repeat-last-n", d.window, "tokens the penalties look back over (-1 = all)")
	fs.Int64Var(&s.seed, "seed", d.seed, "random seed (-1 = random; the seed used is reported)")
	fs.Var(&s.stops, "stop", "stop `string` (repeatable)")
	fs.BoolVar(&s.ignoreEOS, "ignore-eos", false, "keep generating past end-of-generation tokens")
}

func (s *samplingFlags) options() (engine.GenerateOptions, uint64, error) {
	seed := uint64(s.seed)
	if s.seed < 0 {
		var b [8]byte
		if _, err := rand.Read(b[:]); err != nil {
			return engine.GenerateOptions{}, 0, fmt.Errorf("seed: %w", err)
		}
		seed = binary.LittleEndian.Uint64(b[:]) >> 1
	}
	p := sample.Params{
		Temperature: float32(s.temp), TopK: s.topK, TopP: float32(s.topP), MinP: float32(s.minP),
		RepeatPenalty: float32(s.repeat), PresencePenalty: float32(s.presence), FrequencyPenalty: float32(s.freq),
		PenaltyWindow: s.window, Seed: seed,
	}
	if err := p.Validate(); err != nil {
		return engine.GenerateOptions{}, 0, usagef("%v", err)
	}
	return engine.GenerateOptions{MaxTokens: s.n, Sampling: p, Stop: s.stops, IgnoreEOS: s.ignoreEOS}, seed, nil
}

// generateJSON is the documented shape of `churon generate --json`.
type generateJSON struct {
	Model        string  `json:"model"`
	Prompt       string  `json:"prompt"`
	PromptTokens []int32 `json:"prompt_tokens"`
	Tokens       []int32 `json:"tokens"`
	Text         string  `json:"text"`
	FinishReason string  `json:"finish_reason"`
	Seed         uint64  `json:"seed"`
	TTFTMs       float64 `json:"ttft_ms"`
	PromptTPS    float64 `json:"prompt_tps"`
	GenTPS       float64 `json:"gen_tps"`
	Threads      int     `json:"threads"`
}

func runGenerate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("generate", stderr)
	var mf modelFlags
	var pf promptFlags
	var sf samplingFlags
	mf.register(fs)
	pf.register(fs)
	sf.register(fs, generateDefaults())
	promptsFile := fs.String("prompts", "", "read prompts from `file`, one per line")
	asJSON := fs.Bool("json", false, "print one JSON object per prompt instead of streaming text")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	prompts := append([]string(nil), pf.prompts...)
	prompts = append(prompts, pos...)
	if *promptsFile != "" {
		lines, err := readLines(*promptsFile)
		if err != nil {
			return err
		}
		prompts = append(prompts, lines...)
	}
	if len(prompts) == 0 {
		return usagef("a prompt is required: -p TEXT")
	}
	opt, seed, err := sf.options()
	if err != nil {
		return err
	}
	if err := mf.orDemo(ctx, stderr); err != nil {
		return err
	}
	if demo.IsPath(mf.path) && pf.system == "" {
		// A story model without a chat template: it continues the prompt.
		pf.raw = true
	}
	m, err := mf.load(ctx)
	if err != nil {
		return err
	}
	defer m.Close()
	if !pf.raw && !m.Info().HasTemplate {
		fmt.Fprintln(stderr, "churon: the model has no chat template; using a generic ChatML format (use --raw for plain completion)")
	} else if err := m.TemplateError(); err != nil && !pf.raw {
		fmt.Fprintf(stderr, "churon: the model's chat template cannot be used (%v); using a generic ChatML format\n", err)
	}
	w := bufio.NewWriter(stdout)
	defer w.Flush()
	if len(prompts) > 1 {
		return generateBatch(ctx, w, stderr, m, &mf, &pf, prompts, opt, seed, *asJSON)
	}
	seq, err := mf.sequence(m)
	if err != nil {
		return err
	}
	ids, text, err := pf.tokens(ctx, m, prompts[0])
	if err != nil {
		return err
	}
	res, err := seq.Generate(ctx, ids, opt, func(t engine.Token) error {
		if *asJSON {
			return nil
		}
		if _, err := w.WriteString(t.Text); err != nil {
			return err
		}
		return w.Flush()
	})
	if err != nil {
		return err
	}
	if *asJSON {
		return writeGenerateJSON(w, m, text, ids, res, seed)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(stderr, "\n[%d prompt tokens, %d generated, %s; TTFT %.0f ms, prompt %.1f tok/s, generation %.1f tok/s, seed %d]\n",
		len(ids), len(res.Tokens), res.Finish, ms(res.TTFT), res.PromptTPS, res.GenTPS, seed)
	return nil
}

// generateBatch runs several prompts through the session's scheduler
// (session.Batch, the one the window's chats and the API server use):
// every step decodes a token for each of them in one pass, reading the
// weights once for all, and a prompt still being processed is fed in
// chunks beside the others' decode steps. Answers are printed in prompt
// order once all are done, then the aggregate throughput.
func generateBatch(ctx context.Context, w *bufio.Writer, stderr io.Writer, m *engine.Model, mf *modelFlags, pf *promptFlags,
	prompts []string, opt engine.GenerateOptions, seed uint64, asJSON bool) error {
	seqs := make([]*engine.Sequence, len(prompts))
	ids := make([][]int32, len(prompts))
	texts := make([]string, len(prompts))
	for i, p := range prompts {
		var err error
		if seqs[i], err = mf.sequence(m); err != nil {
			return err
		}
		if ids[i], texts[i], err = pf.tokens(ctx, m, p); err != nil {
			return err
		}
	}
	b := session.NewBatch(m, session.BatchOptions{})
	defer b.Close()
	start := time.Now()
	runs := make([]*session.Run, len(prompts))
	for i := range prompts {
		var err error
		if runs[i], err = b.Start(ctx, seqs[i], ids[i], opt, nil); err != nil {
			return fmt.Errorf("prompt %d: %w", i+1, err)
		}
	}
	results := make([]engine.Result, len(runs))
	promptTokens, genTokens := 0, 0
	var first, last time.Time
	for i, r := range runs {
		res, err := r.Wait()
		if err != nil {
			return fmt.Errorf("prompt %d: %w", i+1, err)
		}
		results[i] = res
		promptTokens += len(ids[i])
		// Each answer's tokens after its first, over the span from the
		// first answer's first token to the last one's end, as a batch's
		// aggregate rate (a token each pass after the first).
		if n := len(res.Tokens); n > 1 {
			genTokens += n - 1
			at := start.Add(res.TTFT)
			if first.IsZero() || at.Before(first) {
				first = at
			}
			if end := at.Add(res.GenTime); end.After(last) {
				last = end
			}
		}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	for i, res := range results {
		if asJSON {
			if err := writeGenerateJSON(w, m, texts[i], ids[i], res, seed); err != nil {
				return err
			}
			continue
		}
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "[%d] %s\n", i+1, res.Text)
	}
	tps := 0.0
	if span := last.Sub(first); genTokens > 0 && span > 0 {
		tps = float64(genTokens) / span.Seconds()
	}
	fmt.Fprintf(stderr, "[batch of %d: %d prompt tokens, %d generated at %.1f tok/s aggregate in %.2f s, seed %d]\n",
		len(prompts), promptTokens, genTokens, tps, time.Since(start).Seconds(), seed)
	return nil
}

func writeGenerateJSON(w io.Writer, m *engine.Model, prompt string, ids []int32, res engine.Result, seed uint64) error {
	out := generateJSON{
		Model: m.Info().Path, Prompt: prompt, PromptTokens: ids, Tokens: res.Tokens, Text: res.Text,
		FinishReason: string(res.Finish), Seed: seed,
		TTFTMs: ms(res.TTFT), PromptTPS: res.PromptTPS, GenTPS: res.GenTPS, Threads: m.Info().Threads,
	}
	if out.Tokens == nil {
		out.Tokens = []int32{}
	}
	return writeJSON(w, out)
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func readLines(path string) ([]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, l := range strings.Split(string(data), "\n") {
		l = strings.TrimRight(l, "\r")
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return out, nil
}
