package compare

import (
	api "github.com/churon/churon/app/api/compare"
	"github.com/churon/churon/engine"
	"github.com/churon/churon/engine/sample"
	"github.com/churon/churon/internal/units"
)

// DefaultSampling is `churon generate`'s defaults: the engine's chat
// sampler (temperature 0.8, top-k 40, top-p 0.95, min-p 0.05) without the
// repetition penalty, at most 256 tokens, seed 0.
func DefaultSampling() api.Sampling {
	p := sample.DefaultParams()
	p.RepeatPenalty = 1
	return SamplingOf(engine.GenerateOptions{MaxTokens: 256, Sampling: p})
}

// SamplingOf takes the settings from engine generation options.
func SamplingOf(o engine.GenerateOptions) api.Sampling {
	p := o.Sampling
	return api.Sampling{
		MaxTokens: o.MaxTokens, Temperature: units.Decimal(p.Temperature), TopK: p.TopK, TopP: units.Decimal(p.TopP),
		MinP: units.Decimal(p.MinP), RepeatPenalty: units.Decimal(p.RepeatPenalty), PresencePenalty: units.Decimal(p.PresencePenalty),
		FrequencyPenalty: units.Decimal(p.FrequencyPenalty), PenaltyWindow: p.PenaltyWindow, Seed: p.Seed,
		Stop: o.Stop, IgnoreEOS: o.IgnoreEOS,
	}
}

// GenerateOptions turns the settings back into generation options, to
// rerun a saved comparison with the same settings.
func GenerateOptions(s api.Sampling) engine.GenerateOptions {
	return engine.GenerateOptions{
		MaxTokens: s.MaxTokens, Stop: s.Stop, IgnoreEOS: s.IgnoreEOS,
		Sampling: sample.Params{
			Temperature: float32(s.Temperature), TopK: s.TopK, TopP: float32(s.TopP), MinP: float32(s.MinP),
			RepeatPenalty: float32(s.RepeatPenalty), PresencePenalty: float32(s.PresencePenalty),
			FrequencyPenalty: float32(s.FrequencyPenalty), PenaltyWindow: s.PenaltyWindow, Seed: s.Seed,
		},
	}
}
