package session

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
	// ThinkingOff asks a model that thinks before it answers (Qwen3's
	// template's enable_thinking) to answer at once; templates without
	// the switch ignore it.
	ThinkingOff bool `json:"thinking_off,omitempty"`
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
