package engine

import (
	"context"
	"errors"
	"fmt"
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
}

// Token is one generated token as it streams out.
type Token struct {
	ID int32
	// Text is the newly completed text: only whole UTF-8, so it may be
	// empty while a multi-byte character is split across tokens, and it
	// holds back text that might begin a stop string.
	Text    string
	Elapsed time.Duration // since Generate started
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
	res := Result{PromptTokens: len(prompt)}
	tok := s.m.tok
	smp, err := sample.New(opt.Sampling, s.m.info.VocabSize)
	if err != nil {
		return res, fmt.Errorf("engine: %w", err)
	}
	for _, t := range s.tokens {
		smp.Accept(t)
	}
	for _, t := range prompt {
		smp.Accept(t)
	}
	if len(prompt) == 0 && len(s.tokens) == 0 {
		return res, fmt.Errorf("engine: generate: empty prompt")
	}
	if err := s.Feed(ctx, prompt); err != nil {
		if ctx.Err() != nil {
			res.Finish = FinishCancelled
			return res, nil
		}
		if errors.Is(err, ErrContextFull) {
			res.Finish = FinishContext
		}
		return res, err
	}
	res.PromptTime = time.Since(start)
	if len(prompt) > 0 && res.PromptTime > 0 {
		res.PromptTPS = float64(len(prompt)) / res.PromptTime.Seconds()
	}

	// Generated text continues the prompt, so its first word keeps its space.
	dec := tok.NewDecoder(tokenizer.DecodeOptions{Special: opt.RenderSpecial, KeepLeadingSpace: true})
	stops := sample.NewStopMatcher(opt.Stop)
	var text strings.Builder
	var firstAt time.Time
	emit := func(id int32, piece string) error {
		text.WriteString(piece)
		if onToken == nil {
			return nil
		}
		return onToken(Token{ID: id, Text: piece, Elapsed: time.Since(start)})
	}
	finish := func(reason FinishReason) (Result, error) {
		rest := dec.Flush()
		if reason != FinishStop {
			out, _ := stops.Feed(rest)
			rest = out + stops.Flush()
		}
		if rest != "" {
			if err := emit(-1, rest); err != nil {
				return res, err
			}
		}
		res.Finish = reason
		res.Text = text.String()
		if n := len(res.Tokens); n > 1 {
			res.GenTime = time.Since(firstAt)
			res.GenTPS = float64(n-1) / res.GenTime.Seconds()
		}
		return res, nil
	}
	for {
		if ctx.Err() != nil {
			return finish(FinishCancelled)
		}
		if opt.MaxTokens > 0 && len(res.Tokens) >= opt.MaxTokens {
			return finish(FinishLength)
		}
		id := smp.Sample(s.logits)
		smp.Accept(id)
		if len(res.Tokens) == 0 {
			firstAt = time.Now()
			res.TTFT = firstAt.Sub(start)
		}
		res.Tokens = append(res.Tokens, id)
		if tok.IsEOG(id) && !opt.IgnoreEOS {
			return finish(FinishEOS)
		}
		piece, stopped := stops.Feed(dec.Push(id))
		if err := emit(id, piece); err != nil {
			res.Finish = FinishError
			return res, err
		}
		if stopped {
			return finish(FinishStop)
		}
		if opt.MaxTokens > 0 && len(res.Tokens) >= opt.MaxTokens {
			return finish(FinishLength)
		}
		if s.Len() >= s.kv.Context {
			return finish(FinishContext)
		}
		if err := s.Feed(ctx, []int32{id}); err != nil {
			if ctx.Err() != nil {
				return finish(FinishCancelled)
			}
			res.Finish = FinishError
			return res, err
		}
	}
}
