package session

import (
	"time"

	"github.com/churon/churon/app/store"
)

// Conversation and Message are the store's types: the UI gets them from
// the manager without importing the store.
type (
	Conversation = store.Conversation
	Message      = store.Message
	SearchHit    = store.SearchHit
)

// The roles of a conversation's messages.
const (
	RoleUser      = store.RoleUser
	RoleAssistant = store.RoleAssistant
	RoleNotice    = store.RoleNotice
)

// Event is something the manager reports on its Events channel: one of
// the types below. Switch on the concrete type.
type Event interface{ event() }

// Token is new answer text. Text starts at byte Offset of the answer, so
// a consumer that already holds the answer up to a later point (from
// Messages, say) can tell what is new: answer = answer[:Offset] + Text.
// When the consumer is slow, consecutive Token events of an answer are
// merged into one, so Text may hold many tokens.
//
// Reasoning marks text of the answer's reasoning (a <think> block,
// gpt-oss's analysis channel), which Message.Reasoning holds apart from
// Content: Offset is then into the reasoning, whose events come in order
// with the content's (reasoning first, as the model thinks before it
// answers). Markers such as <think> never reach Text.
type Token struct {
	Conv, Msg int64
	Offset    int
	Text      string
	Reasoning bool
	Tokens    int           // answer tokens generated so far
	Elapsed   time.Duration // since the answer's generation started
}

// Stats are an answer's measurements, sent just before its Done.
type Stats struct {
	Conv, Msg int64
	// PromptTokens is the whole prompt; Reused of them came from the
	// conversation's KV cache and Processed were run through the model.
	PromptTokens, Reused, Processed int
	GenTokens                       int
	// TTFT is what the person waited for the first token: reading and
	// rendering the conversation, restoring or allocating the KV cache and
	// processing the prompt.
	TTFT              time.Duration
	PromptTPS, GenTPS float64
	Seed              uint64
	// From is where the reused tokens came from: CacheRAM, CacheDisk (a
	// snapshot read back, taking Restore) or CacheNone (a cold prefill).
	From    CacheWhere
	Restore time.Duration
	// Dropped is how many of the conversation's oldest messages were left
	// out of the prompt because the conversation outgrew the context.
	Dropped int
	// ReasoningTokens of GenTokens were the answer's reasoning, generated
	// over ReasoningTime (from the start of generation to its last
	// reasoning token).
	ReasoningTokens int
	ReasoningTime   time.Duration
}

// Reason says why an answer ended.
type Reason string

const (
	ReasonEOS       Reason = "eos"       // the model ended its turn
	ReasonStop      Reason = "stop"      // a stop string matched
	ReasonLength    Reason = "length"    // MaxTokens reached
	ReasonContext   Reason = "context"   // the context filled up (a kind of length)
	ReasonCancelled Reason = "cancelled" // Stop, Delete, a model change or Close
	ReasonError     Reason = "error"     // see Done.Err
)

// Done ends an answer. Msg is 0 when the answer was cancelled (or failed)
// before it started, while it waited its turn.
type Done struct {
	Conv, Msg int64
	Reason    Reason
	Err       error // set when Reason is ReasonError
}

// Queued says an answer waits: answers run together up to a cap
// (Status.MaxAnswers), and this one waits for a place: Position-1 waiting
// answers are ahead of it. 0 means it waits only for the model to finish
// loading. It is sent again when the position changes; the answer's
// MessageAdded says it started.
type Queued struct {
	Conv     int64
	Position int
}

// Error reports a failure that has no Done of its own: a model that
// failed to load, an answer that could not be saved.
type Error struct {
	Conv int64 // 0 when no conversation is concerned
	Op   string
	Err  error
}

// ModelLoading reports load progress from 0 to 1.
type ModelLoading struct {
	Path     string
	Progress float64
}

// ModelLoaded: the model is ready.
type ModelLoaded struct{ Info ModelInfo }

// DeviceFallback: the accelerator failed during an answer. The answer
// went on on the CPU, and the model stays there until it is loaded again;
// a ModelLoaded with the new placement follows. Err says what failed.
type DeviceFallback struct {
	Path string
	Err  error
}

// ModelUnloaded: no model is loaded any more (after UnloadModel, before
// another model loads, or after a load failed).
type ModelUnloaded struct{ Path string }

// MessageAdded: a message was stored (the person's, or an answer about to
// stream, with empty content).
type MessageAdded struct{ Message Message }

// MessagesChanged: a conversation's messages changed other than by
// appending (Edit, Regenerate): reload them with Messages.
type MessagesChanged struct{ Conv int64 }

// ConversationChanged: a conversation was created, renamed, pinned,
// deleted, restored or got new settings: reload the list.
type ConversationChanged struct {
	Conv    int64
	Deleted bool
}

func (Token) event()               {}
func (Stats) event()               {}
func (Done) event()                {}
func (Queued) event()              {}
func (Error) event()               {}
func (ModelLoading) event()        {}
func (ModelLoaded) event()         {}
func (ModelUnloaded) event()       {}
func (DeviceFallback) event()      {}
func (MessageAdded) event()        {}
func (MessagesChanged) event()     {}
func (ConversationChanged) event() {}

// SettingChanged: an app setting was set (see Service.SetSetting).
type SettingChanged struct{ Key, Value string }

// ComparisonsChanged: a comparison was saved or deleted: reload the list.
type ComparisonsChanged struct{ ID int64 }

// Status is a snapshot of what the manager is doing.
type Status struct {
	Model   *ModelInfo // nil when none is loaded
	Loading string     // path of the model being loaded, or ""
	// Answering are the conversations answering now, together (in the
	// order they started); Generating is the first of them, or 0.
	Answering  []int64
	Generating int64
	Queued     []int64 // conversations waiting, in order
	// Requests and RequestsQueued count the API requests answering and
	// waiting that no conversation stores.
	Requests, RequestsQueued int
	// MaxAnswers is the cap on answers at once; Exclusive: someone (the
	// Compare page measuring) holds the machine and answers wait.
	MaxAnswers int
	Exclusive  bool
}

func (CacheState) event()         {}
func (SettingChanged) event()     {}
func (ComparisonsChanged) event() {}
