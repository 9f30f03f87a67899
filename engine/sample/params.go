package sample

import (
	"fmt"
	"math"
)

// DefaultPenaltyWindow is the number of recent tokens the penalties look at
// when Params.PenaltyWindow is 0 (llama.cpp's and ollama's repeat_last_n).
const DefaultPenaltyWindow = 64

// Params configures a Sampler. The zero value is not valid (TopP 0 and
// RepeatPenalty 0 are rejected): start from DefaultParams and change what
// you need.
type Params struct {
	// Temperature divides the logits of the tokens that survive
	// truncation. <= 0 means greedy: argmax, lowest id on ties.
	Temperature float32
	// TopK keeps the K most likely tokens (lowest ids win ties at the
	// boundary). 0 = off.
	TopK int
	// TopP keeps the smallest set of most likely tokens whose probability
	// (at temperature 1, over what top-k kept) reaches TopP. 1 = off.
	TopP float32
	// MinP drops tokens whose probability is below MinP times that of the
	// most likely token. 0 = off.
	MinP float32
	// RepeatPenalty divides positive logits and multiplies non-positive
	// ones of tokens seen in the window (llama.cpp's formula). 1 = off.
	RepeatPenalty float32
	// PresencePenalty is subtracted once from the logit of every token
	// seen in the window. 0 = off.
	PresencePenalty float32
	// FrequencyPenalty is subtracted once per occurrence in the window.
	// 0 = off.
	FrequencyPenalty float32
	// PenaltyWindow is how many of the most recently accepted tokens the
	// penalties consider: 0 means DefaultPenaltyWindow, -1 the whole
	// history since New or Reset.
	PenaltyWindow int
	// Seed fixes the random stream: the same seed and the same sequence of
	// logits give the same tokens, across runs, platforms and Go versions.
	// Callers that want fresh text each run pick a random seed themselves.
	Seed uint64
}

// DefaultParams returns chat defaults.
//
// Temperature 0.8, top-k 40, top-p 0.95 and min-p 0.05 are llama.cpp's
// defaults, tuned by its users over years for chat: top-k 40 bounds the
// work per token and cuts the long tail of junk tokens that a 150k
// vocabulary always has, top-p 0.95 and min-p 0.05 then drop what is left
// of the tail when the model is confident, and 0.8 keeps answers varied but
// on topic. The repeat penalty of 1.1 over the last 64 tokens is ollama's
// default: small local models at this temperature fall into loops without
// it. llama.cpp itself moved to 1.0 (off) because a penalty also hits
// tokens that must repeat (code, chat-template markers); set it to 1 for
// code or for checks against llama.cpp's defaults.
func DefaultParams() Params {
	return Params{
		Temperature:   0.8,
		TopK:          40,
		TopP:          0.95,
		MinP:          0.05,
		RepeatPenalty: 1.1,
		PenaltyWindow: DefaultPenaltyWindow,
	}
}

func finite32(x float32) bool {
	return !math.IsNaN(float64(x)) && !math.IsInf(float64(x), 0)
}

// Validate reports the first parameter that is out of range.
func (p Params) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("sample: "+format+": %w", append(args, ErrInvalidParams)...)
	}
	switch {
	case !finite32(p.Temperature):
		return bad("temperature %v is not a finite number", p.Temperature)
	case p.TopK < 0:
		return bad("top-k %d is negative (use 0 to turn it off)", p.TopK)
	case math.IsNaN(float64(p.TopP)) || p.TopP <= 0 || p.TopP > 1:
		return bad("top-p %v is outside (0, 1] (use 1 to turn it off)", p.TopP)
	case math.IsNaN(float64(p.MinP)) || p.MinP < 0 || p.MinP > 1:
		return bad("min-p %v is outside [0, 1] (use 0 to turn it off)", p.MinP)
	case !finite32(p.RepeatPenalty) || p.RepeatPenalty <= 0:
		return bad("repeat penalty %v must be a finite number > 0 (use 1 to turn it off)", p.RepeatPenalty)
	case !finite32(p.PresencePenalty):
		return bad("presence penalty %v is not a finite number", p.PresencePenalty)
	case !finite32(p.FrequencyPenalty):
		return bad("frequency penalty %v is not a finite number", p.FrequencyPenalty)
	case p.PenaltyWindow < -1:
		return bad("penalty window %d is below -1 (use -1 for the whole history)", p.PenaltyWindow)
	}
	return nil
}

// penalized reports whether any penalty is active.
func (p Params) penalized() bool {
	return p.RepeatPenalty != 1 || p.PresencePenalty != 0 || p.FrequencyPenalty != 0
}

// Greedy returns parameters that always pick the most likely token, with
// every penalty off: the setting conformance checks against llama.cpp use.
func Greedy() Params {
	return Params{TopP: 1, RepeatPenalty: 1, PenaltyWindow: DefaultPenaltyWindow}
}
