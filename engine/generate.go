package engine

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/churon/churon/engine/sample"
	"github.com/churon/churon/engine/tokenizer"
)

// GenerateOptions control one completion.
type GenerateOptions struct {
	MaxTokens int // 0 = until end-of-generation or the context is full
	Sampling  sample.Params
	Stop      []string // stop strings; the matched text is not emitted
	IgnoreEOS bool     // keep going past end-of-generation tokens
	// RenderSpecial shows control tokens (e.g. "<|im_end|>") in the text.
	RenderSpecial bool
	// FeedTail feeds a completion that ends at MaxTokens its last token,
	// which is sampled but would otherwise not be fed, so that the
	// sequence holds the whole answer and a follow-up reuses all of it.
	FeedTail bool
	// Logprobs reports each sampled token's log-probability (Token.Logprob)
	// and the TopLogprobs most likely tokens at its position (Token.Top),
	// under the model's own distribution: the softmax of the raw logits,
	// before penalties, temperature and truncation.
	Logprobs    bool
	TopLogprobs int
}

// Token is one generated token as it streams out.
type Token struct {
	// ID is the sampled token, or -1 for the last event of a generation
	// that only releases text held back (a split character, a possible
	// stop-string prefix) when generation ends.
	ID int32
	// Text is the newly completed text: only whole UTF-8, so it may be
	// empty while a multi-byte character is split across tokens, and it
	// holds back text that might begin a stop string.
	Text    string
	Elapsed time.Duration // since Generate started
	// Logprob and Top, with GenerateOptions.Logprobs: the token's
	// log-probability and the most likely tokens at its position, most
	// likely first.
	Logprob float32
	Top     []TokenLogprob
}

// TokenLogprob is a token and its log-probability.
type TokenLogprob struct {
	ID      int32
	Logprob float32
}

// FinishReason says why generation ended.
type FinishReason string

const (
	FinishEOS       FinishReason = "eos"       // the model ended its turn
	FinishStop      FinishReason = "stop"      // a stop string matched
	FinishLength    FinishReason = "length"    // MaxTokens reached
	FinishContext   FinishReason = "context"   // the KV cache is full
	FinishCancelled FinishReason = "cancelled" // ctx was cancelled
	FinishError     FinishReason = "error"
)

// Result summarises a completion.
type Result struct {
	PromptTokens int // tokens fed before the first sample
	Tokens       []int32
	Text         string
	Finish       FinishReason
	TTFT         time.Duration // start → first token sampled (includes prompt processing)
	PromptTime   time.Duration
	GenTime      time.Duration // first token → last token
	// PromptTPS is prompt tokens per second of prompt processing.
	PromptTPS float64
	// GenTPS counts the tokens after the first over the time after the
	// first: each of them costs one forward pass, as llama.cpp's "eval"
	// rate does.
	GenTPS float64
}

// Generate feeds prompt (tokens to append to the sequence, may be empty if
// the sequence already holds them) and samples a completion, calling
// onToken for each token. onToken returning an error stops generation with
// that error. Cancelling ctx stops within one token with FinishCancelled
// and a nil error.
func (s *Sequence) Generate(ctx context.Context, prompt []int32, opt GenerateOptions, onToken func(Token) error) (Result, error) {
	start := time.Now()
	g, err := s.newGen(prompt, &opt, start, onToken)
	if err != nil {
		return g.res, err
	}
	if err := s.Feed(ctx, prompt); err != nil {
		if ctx.Err() != nil {
			g.res.Finish = FinishCancelled
			return g.res, nil
		}
		if errors.Is(err, ErrContextFull) {
			g.res.Finish = FinishContext
		}
		return g.res, err
	}
	g.prompted(time.Now())
	for {
		if ctx.Err() != nil {
			return g.finish(FinishCancelled)
		}
		id, err := g.step()
		if err == nil && g.tail && opt.FeedTail && s.Len() < s.ctxLen {
			// Best effort: the cache stays one token short if it fails.
			s.one[0] = id
			_ = s.Feed(ctx, s.one[:])
		}
		if err != nil || g.done {
			return g.res, err
		}
		s.one[0] = id
		if err := s.Feed(ctx, s.one[:]); err != nil {
			if ctx.Err() != nil {
				return g.finish(FinishCancelled)
			}
			g.res.Finish = FinishError
			return g.res, err
		}
	}
}

// gen is the state of one completion: sampler, streaming decoder, stop
// strings and the result so far. Generate drives one; GenerateBatch
// drives several in lockstep.
type gen struct {
	s       *Sequence
	opt     *GenerateOptions
	smp     *sample.Sampler
	dec     *tokenizer.StreamDecoder
	stops   *sample.StopMatcher
	text    strings.Builder
	res     Result
	start   time.Time
	firstAt time.Time
	onToken func(Token) error
	done    bool
	// tail: the completion ended at MaxTokens on a token it sampled,
	// which is not fed (see GenerateOptions.FeedTail).
	tail bool
	// lp, top: the log-probabilities of the token being emitted
	// (GenerateOptions.Logprobs).
	lp  float32
	top []TokenLogprob
}

func (s *Sequence) newGen(prompt []int32, opt *GenerateOptions, start time.Time, onToken func(Token) error) (*gen, error) {
	g := &gen{s: s, opt: opt, start: start, onToken: onToken, res: Result{PromptTokens: len(prompt)}}
	smp, err := sample.New(opt.Sampling, s.m.info.VocabSize)
	if err != nil {
		return g, fmt.Errorf("engine: %w", err)
	}
	g.smp = smp
	for _, t := range s.tokens {
		smp.Accept(t)
	}
	for _, t := range prompt {
		smp.Accept(t)
	}
	if len(prompt) == 0 && len(s.tokens) == 0 {
		return g, fmt.Errorf("engine: generate: empty prompt")
	}
	// Generated text continues the prompt, so its first word keeps its space.
	g.dec = s.m.tok.NewDecoder(tokenizer.DecodeOptions{Special: opt.RenderSpecial, KeepLeadingSpace: true})
	g.stops = sample.NewStopMatcher(opt.Stop)
	return g, nil
}

// prompted records the end of prompt processing.
func (g *gen) prompted(now time.Time) {
	g.res.PromptTime = now.Sub(g.start)
	if g.res.PromptTokens > 0 && g.res.PromptTime > 0 {
		g.res.PromptTPS = float64(g.res.PromptTokens) / g.res.PromptTime.Seconds()
	}
}

func (g *gen) emit(id int32, piece string) error {
	g.text.WriteString(piece)
	if g.onToken == nil {
		return nil
	}
	t := Token{ID: id, Text: piece, Elapsed: time.Since(g.start)}
	if id >= 0 && g.opt.Logprobs {
		t.Logprob, t.Top = g.lp, slices.Clone(g.top)
	}
	return g.onToken(t)
}

// finish ends the completion for reason, flushing held-back text.
func (g *gen) finish(reason FinishReason) (Result, error) {
	g.done = true
	rest := g.dec.Flush()
	if reason != FinishStop {
		out, _ := g.stops.Feed(rest)
		rest = out + g.stops.Flush()
	}
	if rest != "" {
		if err := g.emit(-1, rest); err != nil {
			return g.res, err
		}
	}
	g.res.Finish = reason
	g.res.Text = g.text.String()
	if n := len(g.res.Tokens); n > 1 {
		g.res.GenTime = time.Since(g.firstAt)
		g.res.GenTPS = float64(n-1) / g.res.GenTime.Seconds()
	}
	return g.res, nil
}

// step samples the next token from the sequence's logits and emits it.
// When the completion ends here it sets g.done (the result is final);
// otherwise the caller feeds the returned token.
func (g *gen) step() (int32, error) {
	opt, s := g.opt, g.s
	if opt.MaxTokens > 0 && len(g.res.Tokens) >= opt.MaxTokens {
		_, err := g.finish(FinishLength)
		return 0, err
	}
	id := g.smp.Sample(s.logits)
	g.smp.Accept(id)
	if opt.Logprobs {
		g.lp, g.top = logprobs(s.logits, id, opt.TopLogprobs, g.top[:0])
	}
	if len(g.res.Tokens) == 0 {
		g.firstAt = time.Now()
		g.res.TTFT = g.firstAt.Sub(g.start)
	}
	g.res.Tokens = append(g.res.Tokens, id)
	if s.m.tok.IsEOG(id) && !opt.IgnoreEOS {
		_, err := g.finish(FinishEOS)
		return id, err
	}
	piece, stopped := g.stops.Feed(g.dec.Push(id))
	if err := g.emit(id, piece); err != nil {
		g.done = true
		g.res.Finish = FinishError
		return id, err
	}
	var err error
	switch {
	case stopped:
		_, err = g.finish(FinishStop)
	case opt.MaxTokens > 0 && len(g.res.Tokens) >= opt.MaxTokens:
		g.tail = true
		_, err = g.finish(FinishLength)
	case s.Len() >= s.ctxLen:
		_, err = g.finish(FinishContext)
	}
	return id, err
}

// BatchResult summarises GenerateBatch.
type BatchResult struct {
	Results      []Result // one per sequence, in order
	PromptTokens int      // all sequences together
	GenTokens    int
	PromptTime   time.Duration // the shared prompt processing
	GenTime      time.Duration // first sampled token → last
	// PromptTPS and GenTPS are aggregate rates: all sequences' tokens
	// over the shared wall-clock time. GenTPS counts each sequence's
	// tokens after its first, as Result.GenTPS does.
	PromptTPS, GenTPS float64
}

// GenerateBatch runs a completion for every sequence at once: prompts[i]
// is fed to seqs[i] (the prompts are processed together), then each step
// samples one token for every unfinished sequence and decodes them all in
// one forward pass (see Model.DecodeBatch), so the weights are read once
// per step for the whole batch. Each sequence stops on its own (end of
// generation, a stop string, MaxTokens, its context), with the options
// and sampler seed of opt, so sequence i produces what
// seqs[i].Generate(ctx, prompts[i], opt, …) would. onToken, when set,
// gets the index of the sequence and its token. onToken returning an
// error stops all sequences with that error; cancelling ctx stops them
// with FinishCancelled and a nil error.
func (m *Model) GenerateBatch(ctx context.Context, seqs []*Sequence, prompts [][]int32, opt GenerateOptions, onToken func(i int, t Token) error) (BatchResult, error) {
	start := time.Now()
	var br BatchResult
	if err := m.checkBatch(seqs, len(prompts), "prompts"); err != nil {
		return br, err
	}
	gens := make([]*gen, len(seqs))
	br.Results = make([]Result, len(seqs))
	collect := func() BatchResult {
		var first, last time.Time
		for i, g := range gens {
			if g == nil {
				continue
			}
			br.Results[i] = g.res
			br.PromptTokens += g.res.PromptTokens
			if n := len(g.res.Tokens); n > 1 {
				br.GenTokens += n - 1
				if first.IsZero() || g.firstAt.Before(first) {
					first = g.firstAt
				}
				if end := g.firstAt.Add(g.res.GenTime); end.After(last) {
					last = end
				}
			}
		}
		br.GenTime = last.Sub(first)
		if br.PromptTokens > 0 && br.PromptTime > 0 {
			br.PromptTPS = float64(br.PromptTokens) / br.PromptTime.Seconds()
		}
		if br.GenTokens > 0 && br.GenTime > 0 {
			br.GenTPS = float64(br.GenTokens) / br.GenTime.Seconds()
		}
		return br
	}
	for i, s := range seqs {
		var cb func(Token) error
		if onToken != nil {
			cb = func(t Token) error { return onToken(i, t) }
		}
		g, err := s.newGen(prompts[i], &opt, start, cb)
		gens[i] = g
		if err != nil {
			return collect(), fmt.Errorf("sequence %d: %w", i, err)
		}
	}
	if err := m.FeedBatch(ctx, seqs, prompts); err != nil {
		if ctx.Err() != nil {
			for _, g := range gens {
				g.res.Finish = FinishCancelled
			}
			return collect(), nil
		}
		if errors.Is(err, ErrContextFull) {
			for _, g := range gens {
				g.res.Finish = FinishContext
			}
		}
		return collect(), err
	}
	now := time.Now()
	br.PromptTime = now.Sub(start)
	for _, g := range gens {
		g.prompted(now)
	}
	active := make([]*Sequence, 0, len(seqs))
	ids := make([]int32, 0, len(seqs))
	for {
		active, ids = active[:0], ids[:0]
		for i, g := range gens {
			if g.done {
				continue
			}
			if ctx.Err() != nil {
				g.finish(FinishCancelled)
				continue
			}
			id, err := g.step()
			if err != nil {
				return collect(), fmt.Errorf("sequence %d: %w", i, err)
			}
			if !g.done {
				active = append(active, seqs[i])
				ids = append(ids, id)
			}
		}
		if len(active) == 0 {
			return collect(), nil
		}
		if err := m.DecodeBatch(ctx, active, ids); err != nil {
			cancelled := ctx.Err() != nil
			for _, g := range gens {
				switch {
				case g.done:
				case cancelled:
					g.finish(FinishCancelled)
				default:
					g.done = true
					g.res.Finish = FinishError
				}
			}
			if cancelled {
				return collect(), nil
			}
			return collect(), err
		}
	}
}

// logprobs is the log-probability of id under the softmax of logits and
// the top most likely tokens (appended to buf), most likely first. NaN
// logits count as impossible, as the sampler counts them.
func logprobs(logits []float32, id int32, top int, buf []TokenLogprob) (float32, []TokenLogprob) {
	hi := float32(math.Inf(-1))
	for _, x := range logits {
		if x > hi {
			hi = x
		}
	}
	var sum float64
	for _, x := range logits {
		if x == x { // not NaN
			sum += math.Exp(float64(x - hi))
		}
	}
	lse := float64(hi) + math.Log(sum)
	lp := func(x float32) float32 {
		if x != x {
			return float32(math.Inf(-1))
		}
		return float32(float64(x) - lse)
	}
	top = min(top, len(logits))
	for i, x := range logits {
		if top == 0 {
			break
		}
		if x != x {
			continue
		}
		if len(buf) == top && x <= logits[buf[top-1].ID] {
			continue
		}
		// Insert in order: top is small (OpenAI allows 20).
		j := len(buf)
		if j < top {
			buf = append(buf, TokenLogprob{})
		} else {
			j--
		}
		for j > 0 && logits[buf[j-1].ID] < x {
			buf[j] = buf[j-1]
			j--
		}
		buf[j] = TokenLogprob{ID: int32(i)}
	}
	for i := range buf {
		buf[i].Logprob = lp(logits[buf[i].ID])
	}
	return lp(logits[id]), buf
}
