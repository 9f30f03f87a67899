package serve

import (
	"encoding/json"

	"github.com/churon/churon/app/api/openai"
)

// The OpenAI API's JSON, as far as Churon reads and writes it. Request
// fields are pointers where absent and zero mean different things.

type chatRequest struct {
	Model               string          `json:"model"`
	Messages            []chatMessage   `json:"messages"`
	MaxTokens           *int            `json:"max_tokens"`
	MaxCompletionTokens *int            `json:"max_completion_tokens"`
	Stream              bool            `json:"stream"`
	StreamOptions       *streamOptions  `json:"stream_options"`
	Logprobs            *bool           `json:"logprobs"`
	TopLogprobs         *int            `json:"top_logprobs"`
	ResponseFormat      *responseFormat `json:"response_format"`
	Tools               json.RawMessage `json:"tools"`
	ToolChoice          json.RawMessage `json:"tool_choice"`
	Functions           json.RawMessage `json:"functions"`
	// Conversation (Churon's own): continue this stored conversation, by
	// id (a number or its decimal string).
	Conversation json.RawMessage `json:"conversation"`
	sampling
}

type completionRequest struct {
	Model     string          `json:"model"`
	Prompt    json.RawMessage `json:"prompt"`
	MaxTokens *int            `json:"max_tokens"`
	Stream    bool            `json:"stream"`
	// StreamOptions: as chat's.
	StreamOptions *streamOptions `json:"stream_options"`
	// Logprobs is the legacy API's: the number of most likely tokens to
	// report at each place (0 to 5), each token's own always.
	Logprobs *int            `json:"logprobs"`
	Echo     bool            `json:"echo"`
	Suffix   json.RawMessage `json:"suffix"`
	BestOf   *int            `json:"best_of"`
	sampling
}

// sampling are the fields both requests share: the client's, and stop,
// which may be a string or an array.
type sampling struct {
	openai.Sampling
	Stop json.RawMessage `json:"stop"`
}

type chatMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
	Name    string          `json:"name"`
	// ToolCalls of an assistant message: Churon runs no tools.
	ToolCalls json.RawMessage `json:"tool_calls"`
}

// contentPart is one part of a message whose content is an array.
type contentPart struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type responseFormat struct {
	Type string `json:"type"`
}

// Responses: the chat ones are app/api/openai's, which the client reads;
// the legacy completions API's are below.

type textCompletion struct {
	ID                string        `json:"id"`
	Object            string        `json:"object"`
	Created           int64         `json:"created"`
	Model             string        `json:"model"`
	SystemFingerprint string        `json:"system_fingerprint"`
	Choices           []textChoice  `json:"choices"`
	Usage             *openai.Usage `json:"usage,omitempty"`
}

type textChoice struct {
	Index        int           `json:"index"`
	Text         string        `json:"text"`
	Logprobs     *textLogprobs `json:"logprobs"`
	FinishReason *string       `json:"finish_reason"`
}

// textLogprobs is the legacy completions API's logprobs.
type textLogprobs struct {
	Tokens        []string             `json:"tokens"`
	TokenLogprobs []float32            `json:"token_logprobs"`
	TopLogprobs   []map[string]float32 `json:"top_logprobs"`
	TextOffset    []int                `json:"text_offset"`
}
