package openai

import "encoding/json"

// ChatRequest is POST /v1/chat/completions as Churon sends it. Pointers
// are left out when nil, so a server's own defaults apply.
type ChatRequest struct {
	Model         string         `json:"model"`
	Messages      []Message      `json:"messages"`
	Stream        bool           `json:"stream"`
	StreamOptions *StreamOptions `json:"stream_options,omitempty"`
	MaxTokens     *int           `json:"max_tokens,omitempty"`
	Sampling
	Stop        []string `json:"stop,omitempty"`
	Logprobs    bool     `json:"logprobs,omitempty"`
	TopLogprobs *int     `json:"top_logprobs,omitempty"`
}

// Sampling are the sampling fields of the chat and completions requests,
// as Churon sends them and as its server (serve/) reads them; nil is
// absent, the server's default.
type Sampling struct {
	Temperature *float64 `json:"temperature,omitempty"`
	TopP        *float64 `json:"top_p,omitempty"`
	// TopK, MinP and RepeatPenalty are llama-server's, vLLM's and
	// Ollama's extensions; OpenAI's own API ignores or refuses them, so
	// they are sent only when set.
	TopK             *int               `json:"top_k,omitempty"`
	MinP             *float64           `json:"min_p,omitempty"`
	RepeatPenalty    *float64           `json:"repeat_penalty,omitempty"`
	PresencePenalty  *float64           `json:"presence_penalty,omitempty"`
	FrequencyPenalty *float64           `json:"frequency_penalty,omitempty"`
	Seed             *int64             `json:"seed,omitempty"`
	N                *int               `json:"n,omitempty"`
	LogitBias        map[string]float64 `json:"logit_bias,omitempty"`
}

// Message is one message of a chat: role "system", "user" or "assistant".
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// StreamOptions asks for a last chunk carrying usage.
type StreamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// The responses below are what Churon's own server (serve/) writes and
// what the client reads from any server: one set of types for both ends,
// tagged as the server writes them (fields a server may leave out are
// read as their zero value).

// ModelList is GET /v1/models.
type ModelList struct {
	Object string  `json:"object"`
	Data   []Model `json:"data"`
}

// Model is one model an endpoint serves.
type Model struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
}

// Usage is what an answer cost, as the server counted it.
type Usage struct {
	PromptTokens        int            `json:"prompt_tokens"`
	CompletionTokens    int            `json:"completion_tokens"`
	TotalTokens         int            `json:"total_tokens"`
	PromptTokensDetails *PromptDetails `json:"prompt_tokens_details,omitempty"`
}

// PromptDetails: CachedTokens of the prompt came from the server's cache.
type PromptDetails struct {
	CachedTokens int `json:"cached_tokens"`
}

// ChatChunk is one event of a streamed chat completion (object
// "chat.completion.chunk"), or a whole completion (object
// "chat.completion", whose choices carry Message instead of Delta).
type ChatChunk struct {
	ID                string   `json:"id"`
	Object            string   `json:"object"`
	Created           int64    `json:"created"`
	Model             string   `json:"model"`
	SystemFingerprint string   `json:"system_fingerprint"`
	Choices           []Choice `json:"choices"`
	Usage             *Usage   `json:"usage,omitempty"`
	// Conversation (Churon's own): where its server stored the request.
	Conversation int64 `json:"conversation,omitempty"`
	// Timings are llama-server's own measurements (its last chunk).
	Timings *Timings `json:"timings,omitempty"`
	// Error is set by servers that report a failure inside the stream
	// (llama-server, vLLM and Ollama send {"error": {...}} as a data
	// event).
	Error *ErrorBody `json:"error,omitempty"`
	// Message is vLLM's older in-stream error, a bare ErrorResponse
	// ({"object": "error", "message": …}).
	Message string `json:"message,omitempty"`
}

// Timings are llama-server's measurements of an answer: prompt and
// generation speed as the server saw them, free of the network.
type Timings struct {
	PromptN            int     `json:"prompt_n"`
	PromptPerSecond    float64 `json:"prompt_per_second"`
	PredictedN         int     `json:"predicted_n"`
	PredictedPerSecond float64 `json:"predicted_per_second"`
}

// Choice is one choice of a chunk: Churon asks for one (n = 1).
type Choice struct {
	Index        int       `json:"index"`
	Message      *Delta    `json:"message,omitempty"`
	Delta        *Delta    `json:"delta,omitempty"`
	Logprobs     *Logprobs `json:"logprobs"`
	FinishReason *string   `json:"finish_reason"`
}

// Delta is new text of the answer. Reasoning is where servers put a
// thinking model's reasoning apart from its answer: llama-server and
// vLLM call it reasoning_content, Ollama reasoning. Content is nil when
// absent (a chunk of reasoning only), unlike "" (an empty answer).
type Delta struct {
	Role             string  `json:"role,omitempty"`
	Content          *string `json:"content,omitempty"`
	ReasoningContent string  `json:"reasoning_content,omitempty"`
	Reasoning        string  `json:"reasoning,omitempty"`
}

// Logprobs are the log-probabilities of the tokens of a chunk.
type Logprobs struct {
	Content []TokenLogprob `json:"content"`
}

// TokenLogprob is a token, its log-probability and the most likely
// tokens at its place (when top_logprobs was asked).
type TokenLogprob struct {
	Token       string       `json:"token"`
	Logprob     float64      `json:"logprob"`
	Bytes       []int        `json:"bytes"`
	TopLogprobs []TopLogprob `json:"top_logprobs"`
}

// TopLogprob is one of the most likely tokens at a place.
type TopLogprob struct {
	Token   string  `json:"token"`
	Logprob float64 `json:"logprob"`
	Bytes   []int   `json:"bytes"`
}

// ErrorBody is OpenAI's error shape, {"error": {...}}, as servers send
// it; some (Ollama's native API, older llama-server) send the message as
// a bare string, which UnmarshalJSON accepts too.
type ErrorBody struct {
	Message string `json:"message"`
	Type    string `json:"type,omitempty"`
	Code    any    `json:"code,omitempty"`
}

// UnmarshalJSON accepts an object or a string.
func (e *ErrorBody) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*e = ErrorBody{Message: s}
		return nil
	}
	type plain ErrorBody
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*e = ErrorBody(p)
	return nil
}

// Text is the chunk's new answer text (its first choice's).
func (c ChatChunk) Text() string {
	if d := c.delta(); d != nil && d.Content != nil {
		return *d.Content
	}
	return ""
}

// ReasoningText is the chunk's new reasoning text, whichever field the
// server puts it in.
func (c ChatChunk) ReasoningText() string {
	if d := c.delta(); d != nil {
		return d.ReasoningContent + d.Reasoning
	}
	return ""
}

// Finish is the first choice's finish_reason, "" while it streams.
func (c ChatChunk) Finish() string {
	if len(c.Choices) > 0 && c.Choices[0].FinishReason != nil {
		return *c.Choices[0].FinishReason
	}
	return ""
}

// TokenLogprobs are the first choice's logprobs, nil when none came.
func (c ChatChunk) TokenLogprobs() []TokenLogprob {
	if len(c.Choices) > 0 && c.Choices[0].Logprobs != nil {
		return c.Choices[0].Logprobs.Content
	}
	return nil
}

func (c ChatChunk) delta() *Delta {
	if len(c.Choices) == 0 {
		return nil
	}
	if d := c.Choices[0].Delta; d != nil {
		return d
	}
	return c.Choices[0].Message
}
