package session

import (
	"encoding/json"
	"fmt"

	"github.com/churon/churon/engine/sample"
)

// Settings are a conversation's generation settings. They are stored with
// the conversation (the system prompt in its own column, the rest as the
// JSON below, whose field names are part of the database format) and, with
// the seed actually used, with every answer.
type Settings struct {
	SystemPrompt string `json:"-"`

	Temperature      float32 `json:"temperature"`
	TopK             int     `json:"top_k"`
	TopP             float32 `json:"top_p"`
	MinP             float32 `json:"min_p"`
	RepeatPenalty    float32 `json:"repeat_penalty"`
	PresencePenalty  float32 `json:"presence_penalty"`
	FrequencyPenalty float32 `json:"frequency_penalty"`
	RepeatLastN      int     `json:"repeat_last_n"` // 0 = 64, -1 = the whole history
	// Seed makes answers reproducible; -1 draws a fresh seed for each
	// answer (recorded in the answer's own settings).
	Seed int64 `json:"seed"`
	// MaxTokens caps an answer; 0 = until the model ends its turn or the
	// context is full.
	MaxTokens int `json:"max_tokens"`
	// Context is the conversation's KV cache length in tokens; 0 = the
	// model's trained context, at most 4096.
	Context int      `json:"context"`
	Stop    []string `json:"stop,omitempty"`
	// Overflow is what happens when the conversation outgrows the
	// context: OverflowDrop (the default, also for "") or OverflowStop.
	Overflow Overflow `json:"overflow,omitempty"`
}

// Overflow is a conversation's policy for a history longer than its
// context.
type Overflow string

const (
	// OverflowDrop keeps the system prompt and the newest turns and drops
	// the oldest whole turns from the prompt (they stay in the chat, with
	// a notice that the model no longer sees them).
	OverflowDrop Overflow = "drop"
	// OverflowStop refuses to answer (ErrTooLong) when the prompt does not
	// fit; an answer that fills the context ends with ReasonContext.
	OverflowStop Overflow = "stop"
)

// DefaultSettings are llama.cpp's chat defaults (see sample.DefaultParams)
// with a random seed and no length cap.
func DefaultSettings() Settings {
	return FromParams(sample.DefaultParams(), -1)
}

// FromParams makes settings from sampler parameters; seed -1 means random.
func FromParams(p sample.Params, seed int64) Settings {
	return Settings{
		Temperature: p.Temperature, TopK: p.TopK, TopP: p.TopP, MinP: p.MinP,
		RepeatPenalty: p.RepeatPenalty, PresencePenalty: p.PresencePenalty, FrequencyPenalty: p.FrequencyPenalty,
		RepeatLastN: p.PenaltyWindow, Seed: seed,
	}
}

// Params returns the sampler parameters with the given seed.
func (s Settings) Params(seed uint64) sample.Params {
	return sample.Params{
		Temperature: s.Temperature, TopK: s.TopK, TopP: s.TopP, MinP: s.MinP,
		RepeatPenalty: s.RepeatPenalty, PresencePenalty: s.PresencePenalty, FrequencyPenalty: s.FrequencyPenalty,
		PenaltyWindow: s.RepeatLastN, Seed: seed,
	}
}

// Validate reports the first setting out of range.
func (s Settings) Validate() error {
	if err := s.Params(0).Validate(); err != nil {
		return fmt.Errorf("session: settings: %w", err)
	}
	switch {
	case s.MaxTokens < 0:
		return fmt.Errorf("session: settings: max tokens %d is negative", s.MaxTokens)
	case s.Context < 0:
		return fmt.Errorf("session: settings: context %d is negative", s.Context)
	case s.Seed < -1:
		return fmt.Errorf("session: settings: seed %d: want -1 (random) or a seed ≥ 0", s.Seed)
	case s.Overflow != "" && s.Overflow != OverflowDrop && s.Overflow != OverflowStop:
		return fmt.Errorf("session: settings: overflow %q: want %q or %q", s.Overflow, OverflowDrop, OverflowStop)
	}
	return nil
}

// encode is the JSON stored in the database.
func (s Settings) encode() string {
	b, err := json.Marshal(s)
	if err != nil { // cannot happen: plain numbers and strings
		return ""
	}
	return string(b)
}

// decodeSettings reads stored settings over the defaults, so a field that
// an older version did not write keeps its default instead of becoming a
// zero that the sampler rejects.
func decodeSettings(systemPrompt, js string, defaults Settings) (Settings, error) {
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
