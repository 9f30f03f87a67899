package compare

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	api "github.com/churon/churon/app/api/compare"
	"github.com/churon/churon/engine"
	"github.com/churon/churon/engine/chat"
)

// evalChunk is how many positions are teacher-forced at once: the rows of
// logits held are evalChunk × vocabulary floats for the model and as many
// for the reference (about 19 MB each with a 152k vocabulary).
const evalChunk = 32

// Run compares the models and returns the result. onEvent, if not nil,
// is called for every Event on Run's goroutine, between tokens: it must
// return quickly, as its time counts in the speed figures (Start queues
// events instead, for consumers that may be slow).
//
// Models run one after another, never together: decoding reads every
// weight for every token, so it is bound by memory bandwidth, and two
// models decoding at once would split that bandwidth and falsify each
// other's speed; nor need there be memory for four models at once. Each
// model is loaded, generates, is scored against the reference and is
// unloaded before the next loads; the reference goes first, because the
// others are scored over its answer.
//
// Cancelling ctx stops the run within a token or a chunk of scoring;
// Run then returns ctx's error.
func Run(ctx context.Context, opt api.Options, onEvent func(api.Event)) (res *api.Result, err error) {
	emit := func(e api.Event) {
		if onEvent != nil {
			onEvent(e)
		}
	}
	defer func() { emit(api.Done{Result: res, Err: err}) }()
	start := time.Now()
	if n := len(opt.Models); n < 2 || n > 4 {
		return nil, fmt.Errorf("%w (got %d)", api.ErrModelCount, n)
	}
	if strings.TrimSpace(opt.Prompt) == "" {
		return nil, api.ErrEmptyPrompt
	}
	if opt.Sampling.IsZero() {
		opt.Sampling = DefaultSampling()
	}
	gen := GenerateOptions(opt.Sampling)
	if err := gen.Sampling.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", api.ErrOption, err)
	}
	kv, kvName, err := parseKV(opt.KV)
	if err != nil {
		return nil, err
	}
	probes := make([]api.Probe, len(opt.Models))
	for i, p := range opt.Models {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if probes[i], err = ProbeFile(p); err != nil {
			return nil, err
		}
	}
	if err := CheckVocabs(probes); err != nil {
		return nil, err
	}
	for i := range probes {
		probes[i].Tokens = nil // only needed to explain a mismatch
	}
	ref, err := chooseReference(probes, opt.Ref)
	if err != nil {
		return nil, err
	}
	order := []int{ref}
	for i := range probes {
		if i != ref {
			order = append(order, i)
		}
	}
	emit(api.Planned{Models: append([]api.Probe(nil), probes...), Reference: ref, Order: order})

	sp, err := newSpill(opt.ScratchDir, probes[ref].VocabSize)
	if err != nil {
		return nil, err
	}
	defer sp.close()
	c := &runner{opt: &opt, gen: gen, kv: kv, emit: emit, probes: probes, ref: ref, spill: sp, rssSource: api.RSSStatm}
	c.res = &api.Result{
		Format: api.FormatVersion, Title: opt.Title, Created: time.Now().UTC().Format(time.RFC3339),
		Prompt: opt.Prompt, System: opt.System, Sampling: opt.Sampling,
		Reference: ref, Order: order, VocabSize: probes[ref].VocabSize, VocabSHA256: probes[ref].VocabSHA256,
		Models: make([]api.ModelResult, len(probes)), KVType: kvName,
	}
	if c.res.Title == "" {
		c.res.Title = defaultTitle(opt.Prompt, probes)
	}
	for step, i := range order {
		if err := c.model(ctx, i, step+1, len(order)); err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, err
		}
	}
	c.res.RSSSource = c.rssSource
	c.res.ElapsedMs = ms(time.Since(start))
	return c.res, nil
}

func chooseReference(ps []api.Probe, want string) (int, error) {
	if want != "" {
		w := filepath.Clean(want)
		for i, p := range ps {
			if filepath.Clean(p.File) == w {
				return i, nil
			}
		}
		return 0, fmt.Errorf("%w: %s", api.ErrReference, want)
	}
	best := 0
	for i, p := range ps {
		if p.BPW > ps[best].BPW {
			best = i
		}
	}
	return best, nil
}

func defaultTitle(prompt string, ps []api.Probe) string {
	types := make([]string, len(ps))
	for i, p := range ps {
		types[i] = p.Type
	}
	p := strings.Join(strings.Fields(prompt), " ")
	if utf8.RuneCountInString(p) > 48 {
		p = string([]rune(p)[:48]) + "…"
	}
	return strings.Join(types, " vs ") + ": " + p
}

func parseKV(s string) (engine.KVType, string, error) {
	if s == "" {
		return engine.KVF16, engine.KVF16.String(), nil
	}
	t, err := engine.ParseKVType(s)
	if err != nil {
		return 0, "", fmt.Errorf("%w: %v", api.ErrOption, err)
	}
	return t, t.String(), nil
}

// loadModel is engine.Load; a test looks at the file as the load starts.
var loadModel = engine.Load

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// runner is the state of one Run.
type runner struct {
	opt       *api.Options
	gen       engine.GenerateOptions
	kv        engine.KVType
	emit      func(api.Event)
	probes    []api.Probe
	ref       int
	spill     *spill
	res       *api.Result
	rssSource string

	// Set once the reference has run: the tokens every model gets and
	// the reference's per-position normalisers and top tokens.
	prompt []int32
	texts  []api.TextTokens
	ctxLen int
	refLSE []float64
	refTop []int32
}

// model runs model i: load, generate, score, unload.
func (c *runner) model(ctx context.Context, i, step, steps int) error {
	path := c.opt.Models[i]
	c.emit(api.ModelLoading{Model: i, Path: path, Step: step, Steps: steps})
	// Warmed before the memory is read: its buffer is not the model's.
	if err := warm(ctx, path); err != nil {
		return err
	}
	settle()
	before, haveRSS := residentBytes()
	m, err := loadModel(ctx, path, engine.LoadOptions{Threads: c.opt.Threads, InMemory: c.opt.InMemory})
	if err != nil {
		return fmt.Errorf("compare: %w", err)
	}
	defer m.Close()
	info := m.Info()
	c.emit(api.ModelLoaded{Model: i, Load: m.LoadDuration(), Backend: info.Backend, Threads: info.Threads})
	if c.res.Threads == 0 {
		c.res.Threads = info.Threads
	}
	if i == c.ref {
		if err := c.preparePrompt(ctx, m); err != nil {
			return err
		}
	}
	seq, err := m.NewSequence(engine.SequenceOptions{Context: c.ctxLen, KVType: c.kv})
	if err != nil {
		return fmt.Errorf("compare: %s: %w", path, err)
	}
	var pieces []string
	gen, err := seq.Generate(ctx, c.prompt, c.gen, func(t engine.Token) error {
		if t.ID >= 0 {
			pieces = append(pieces, t.Text)
		} else if len(pieces) > 0 {
			pieces[len(pieces)-1] += t.Text
		} else {
			pieces = append(pieces, t.Text)
		}
		c.emit(api.Token{Model: i, ID: t.ID, Text: t.Text, N: len(pieces), Elapsed: t.Elapsed})
		return nil
	})
	if err := ctx.Err(); err != nil {
		return err
	}
	if err != nil {
		return fmt.Errorf("compare: %s: generate: %w", path, err)
	}
	for len(pieces) < len(gen.Tokens) {
		pieces = append(pieces, "") // end-of-generation tokens show no text
	}
	mr := api.ModelResult{
		Probe: c.probes[i], Reference: i == c.ref,
		KVBytes: seq.KVBytes(), LoadMs: ms(m.LoadDuration()), TTFTMs: ms(gen.TTFT),
		PromptTPS: gen.PromptTPS, GenTPS: gen.GenTPS,
		Output: gen.Text, Tokens: gen.Tokens, Pieces: pieces, Finish: string(gen.Finish),
	}
	if mr.Tokens == nil {
		mr.Tokens = []int32{}
	}
	if after, ok := residentBytes(); haveRSS && ok && after > before {
		mr.RSSBytes = after - before
	} else if haveRSS && ok {
		// The garbage collector returned more than a small model took:
		// the growth says nothing, so report what it must hold.
		mr.RSSBytes, mr.RSSEstimated = info.WeightBytes+seq.KVBytes(), true
	} else {
		c.rssSource = api.RSSEstimate
		mr.RSSBytes = info.WeightBytes + seq.KVBytes()
	}
	c.res.Models[i] = mr
	c.emit(api.Generated{Model: i, Result: mr})

	evalStart := time.Now()
	q, err := c.score(ctx, i, m, seq)
	if err != nil {
		return err
	}
	mr.EvalMs = ms(time.Since(evalStart))
	mr.Quality = q
	c.emit(api.QualityReady{Model: i, Quality: *q})
	if err := m.Close(); err != nil {
		return fmt.Errorf("compare: %s: unload: %w", path, err)
	}
	c.res.Models[i] = mr
	c.emit(api.ModelDone{Model: i, Result: mr})
	return nil
}

// preparePrompt renders and tokenizes the prompt and the built-in texts
// with the reference, once: every model gets these very tokens.
func (c *runner) preparePrompt(ctx context.Context, m *engine.Model) error {
	opt, info := c.opt, m.Info()
	raw := opt.Raw || !info.HasTemplate || m.TemplateError() != nil
	if raw {
		text := opt.Prompt
		if opt.System != "" {
			text = opt.System + "\n\n" + opt.Prompt
		}
		c.res.Template, c.res.PromptText = "raw", text
		c.prompt = m.TokenizePrompt(text, true, false)
	} else {
		var msgs []chat.Message
		if opt.System != "" {
			msgs = append(msgs, chat.Message{Role: "system", Content: opt.System})
		}
		msgs = append(msgs, chat.Message{Role: "user", Content: opt.Prompt})
		ids, text, err := m.ChatTokens(ctx, msgs)
		if err != nil {
			return fmt.Errorf("compare: %s: %w", info.Path, err)
		}
		c.res.Template, c.res.PromptText, c.prompt = "chat", text, ids
	}
	if len(c.prompt) == 0 {
		return api.ErrEmptyPrompt
	}
	c.res.PromptTokens = c.prompt
	c.emit(api.PromptReady{Template: c.res.Template, Text: c.res.PromptText, Tokens: c.prompt})

	limit := opt.TextTokens
	if limit == 0 {
		limit = api.DefaultTextTokens
	}
	if info.ContextLength > 0 {
		limit = min(limit, info.ContextLength)
	}
	if opt.Context > 0 {
		limit = min(limit, opt.Context)
	}
	longest := 0
	c.texts = []api.TextTokens{}
	if opt.TextTokens >= 0 {
		for _, t := range api.Texts {
			ids := m.TokenizePrompt(t.Text, true, false)
			if len(ids) > limit {
				ids = ids[:limit]
			}
			if len(ids) < 2 {
				continue
			}
			c.texts = append(c.texts, api.TextTokens{Name: t.Name, Lang: t.Lang, Tokens: ids})
			longest = max(longest, len(ids))
		}
	}
	c.res.Texts = c.texts
	c.ctxLen = opt.Context
	if c.ctxLen <= 0 && opt.Sampling.MaxTokens > 0 {
		c.ctxLen = max(len(c.prompt)+opt.Sampling.MaxTokens, longest)
	}
	return nil
}
