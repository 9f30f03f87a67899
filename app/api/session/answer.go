package session

import (
	"errors"
	"time"
)

// Request is what an API client (the OpenAI-compatible server) asks the
// session to answer: a chat (Messages, rendered with the model's chat
// template) or a plain completion (Prompt, tokenized as it is). It runs
// in the same batch as the window's answers, under the same cap.
type Request struct {
	Messages []RequestMessage
	// Prompt is a plain completion's text, used when Messages is empty.
	Prompt string
	// Settings are the sampling, Stop, MaxTokens and Seed (-1: random);
	// SystemPrompt is not read (a chat's system message is in Messages).
	// Context 0 is the model's trained context, at most 4096.
	Settings Settings
	// Logprobs asks for each token's log-probability and TopLogprobs of
	// the most likely tokens at its place (AnswerText.Logprobs).
	Logprobs    bool
	TopLogprobs int
	// Conversation, when set, continues that stored conversation: Messages
	// are the new turn (its last is the person's) and are stored in it,
	// with the answer, which the window shows as it streams.
	Conversation int64
	// Store keeps the exchange in the history (the person's switch): a
	// request that extends one stored before continues its conversation,
	// any other starts a new one. Without it, nothing is stored; the KV
	// cache is still kept (an API slot), so a request that extends an
	// earlier one's prompt or answer reuses it, across restarts too.
	Store bool
	// Source names the client, for the fair queue: beyond the cap, the
	// next answer to start is the oldest of the source with the fewest
	// answers running.
	Source string
}

// RequestMessage is one message of a Request: role "system", "user" or
// "assistant".
type RequestMessage struct {
	Role    string
	Content string
}

// Answer is a request's answer as it streams: Events delivers
// AnswerStarted (the prompt is processed from now on), AnswerText as the
// text grows, then one AnswerDone, and closes. An error before the answer
// starts (a prompt that does not fit, an empty one) comes as that
// AnswerDone, before any AnswerStarted. Events never blocks the session:
// a slow reader holds the text in memory, never the batch. The requester
// must drain Events until it is closed, or cancel the context it passed.
type Answer struct {
	Events <-chan AnswerEvent
}

// AnswerEvent is one of AnswerStarted, AnswerText, AnswerDone.
type AnswerEvent interface{ answerEvent() }

// AnswerStarted: the answer has a place in the batch and its prompt is
// being processed. PromptTokens is the prompt, Cached of them were
// reused from a KV cache.
type AnswerStarted struct {
	PromptTokens, Cached int
	Conversation         int64 // where it is stored (0: nowhere)
}

// AnswerText is new text of the answer (Reasoning: of its reasoning, a
// <think> block, which Content does not hold). Logprobs has one entry
// per token that completed it, when the request asked. While the reader
// lags, consecutive texts merge into one.
type AnswerText struct {
	Text      string
	Reasoning bool
	Logprobs  []TokenLogprob
	Tokens    int // answer tokens generated so far
}

// TokenLogprob is a generated token, its log-probability and, when asked,
// the most likely tokens at its place.
type TokenLogprob struct {
	Token   string // the token's text (an incomplete character as is)
	Bytes   []byte
	Logprob float32
	Top     []TopLogprob
}

// TopLogprob is one of the most likely tokens at a place.
type TopLogprob struct {
	Token   string
	Bytes   []byte
	Logprob float32
}

// AnswerDone ends an answer: why (Reason, Err when it is ReasonError)
// and what it cost.
type AnswerDone struct {
	Reason Reason
	Err    error
	Usage  Usage
}

// Usage is what an answer cost.
type Usage struct {
	PromptTokens, CompletionTokens int
	// CachedTokens of PromptTokens came from a KV cache (memory or disk).
	CachedTokens int
	// TTFT is from the request to its first token, the wait for a place
	// in the batch included; GenTPS is the tokens after the first per
	// second.
	TTFT   time.Duration
	GenTPS float64
	// Queued is how long the request waited for a place in the batch.
	Queued       time.Duration
	Conversation int64 // where it is stored (0: nowhere)
}

func (AnswerStarted) answerEvent() {}
func (AnswerText) answerEvent()    {}
func (AnswerDone) answerEvent()    {}

// Errors of a Request.
var (
	// ErrBadRequest: the request is malformed (no messages and no prompt, a
	// message of an unknown role, a conversation's turn that does not end
	// with the person's message).
	ErrBadRequest = errors.New("bad request")
)
