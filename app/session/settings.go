package session

import (
	"encoding/json"
	"fmt"

	api "github.com/churon/churon/app/api/session"
	"github.com/churon/churon/engine/sample"
)

// DefaultSettings are llama.cpp's chat defaults (see sample.DefaultParams)
// with a random seed and no length cap.
func DefaultSettings() api.Settings {
	return FromParams(sample.DefaultParams(), -1)
}

// FromParams makes settings from sampler parameters; seed -1 means random.
func FromParams(p sample.Params, seed int64) api.Settings {
	return api.Settings{
		Temperature: p.Temperature, TopK: p.TopK, TopP: p.TopP, MinP: p.MinP,
		RepeatPenalty: p.RepeatPenalty, PresencePenalty: p.PresencePenalty, FrequencyPenalty: p.FrequencyPenalty,
		RepeatLastN: p.PenaltyWindow, Seed: seed,
	}
}

// Params returns the sampler parameters of s with the given seed.
func Params(s api.Settings, seed uint64) sample.Params {
	return sample.Params{
		Temperature: s.Temperature, TopK: s.TopK, TopP: s.TopP, MinP: s.MinP,
		RepeatPenalty: s.RepeatPenalty, PresencePenalty: s.PresencePenalty, FrequencyPenalty: s.FrequencyPenalty,
		PenaltyWindow: s.RepeatLastN, Seed: seed,
	}
}

// Validate reports the first setting of s out of range.
func Validate(s api.Settings) error {
	if err := Params(s, 0).Validate(); err != nil {
		return fmt.Errorf("session: settings: %w", err)
	}
	switch {
	case s.MaxTokens < 0:
		return fmt.Errorf("session: settings: max tokens %d is negative", s.MaxTokens)
	case s.Context < 0:
		return fmt.Errorf("session: settings: context %d is negative", s.Context)
	case s.Seed < -1:
		return fmt.Errorf("session: settings: seed %d: want -1 (random) or a seed ≥ 0", s.Seed)
	case s.Overflow != "" && s.Overflow != api.OverflowDrop && s.Overflow != api.OverflowStop:
		return fmt.Errorf("session: settings: overflow %q: want %q or %q", s.Overflow, api.OverflowDrop, api.OverflowStop)
	}
	return nil
}

// encodeSettings is the JSON stored in the database.
func encodeSettings(s api.Settings) string {
	b, err := json.Marshal(s)
	if err != nil { // cannot happen: plain numbers and strings
		return ""
	}
	return string(b)
}

// decodeSettings reads stored settings over the defaults, so a field that
// an older version did not write keeps its default instead of becoming a
// zero that the sampler rejects.
func decodeSettings(systemPrompt, js string, defaults api.Settings) (api.Settings, error) {
	s := defaults
	s.Stop = append([]string(nil), defaults.Stop...)
	if js != "" {
		if err := json.Unmarshal([]byte(js), &s); err != nil {
			return defaults, fmt.Errorf("session: stored settings: %w", err)
		}
	}
	s.SystemPrompt = systemPrompt
	return s, nil
}

// DefaultSettings are the settings a new conversation starts with (the
// manager's Options.Defaults, else the package's DefaultSettings).
func (m *Manager) DefaultSettings() api.Settings {
	s := m.defaults
	s.Stop = append([]string(nil), s.Stop...)
	return s
}

// CheckSettings reports the first setting out of range (see Validate).
func (m *Manager) CheckSettings(set api.Settings) error { return Validate(set) }
