package compare

import (
	"strconv"

	api "github.com/churon/churon/app/api/compare"
	"github.com/churon/churon/engine"
	"github.com/churon/churon/engine/sample"
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
		MaxTokens: o.MaxTokens, Temperature: f64(p.Temperature), TopK: p.TopK, TopP: f64(p.TopP),
		MinP: f64(p.MinP), RepeatPenalty: f64(p.RepeatPenalty), PresencePenalty: f64(p.PresencePenalty),
		FrequencyPenalty: f64(p.FrequencyPenalty), PenaltyWindow: p.PenaltyWindow, Seed: p.Seed,
		Stop: o.Stop, IgnoreEOS: o.IgnoreEOS,
	}
}

// f64 widens a float32 setting to the float64 that prints as the same
// decimal (0.8, not 0.800000011920929); converting back gives the same
// float32.
func f64(v float32) float64 {
	d, err := strconv.ParseFloat(strconv.FormatFloat(float64(v), 'g', -1, 32), 64)
	if err != nil {
		return float64(v)
	}
	return d
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
