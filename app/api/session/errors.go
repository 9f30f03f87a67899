package session

import "errors"

var (
	// ErrNoModel: a message was sent while no model is loaded or loading.
	ErrNoModel = errors.New("session: no model is loaded")
	// ErrBusy: the conversation is already generating (or waiting its turn
	// to); stop it first, or wait for its Done event.
	ErrBusy = errors.New("session: the conversation is already generating an answer")
	// ErrClosed: the manager has been closed.
	ErrClosed = errors.New("session: closed")
	// ErrEmptyMessage: Send or Edit was given only white space.
	ErrEmptyMessage = errors.New("session: the message is empty")
	// ErrNotUserMessage: Edit names a message a person did not write.
	ErrNotUserMessage = errors.New("session: only the person's own messages can be edited")
	// ErrNoPrompt: Regenerate found no user message to answer.
	ErrNoPrompt = errors.New("session: there is no user message to answer")
	// ErrWrongConversation: a message id does not belong to the
	// conversation named with it.
	ErrWrongConversation = errors.New("session: the message belongs to another conversation")
	// ErrTooLong: the conversation does not fit in the context: its newest
	// turn alone is too long, or its settings say OverflowStop. Raise the
	// context length in the conversation's settings or start a new one.
	ErrTooLong = errors.New("session: the conversation is longer than the context")
)

// LoadFailure says why a model file could not be loaded, in terms a front
// end can word for people.
type LoadFailure int

const (
	LoadNotModel    LoadFailure = iota + 1 // not a GGUF file (or a GGUF version Churon cannot read)
	LoadIncomplete                         // the file ends before its data does: a download cut short
	LoadUnsupported                        // a GGUF file of an architecture Churon does not run
	LoadOutOfMemory                        // no memory for the weights
)

// LoadError is a model that failed to load, as the session reports it
// (Error{Op: "load model"}): Kind says why; Err is the engine's own error,
// the technical chain.
type LoadError struct {
	Path string
	Kind LoadFailure
	// Have and Want are the file's bytes and those its header says it
	// holds (LoadIncomplete; Want is 0 when unknown).
	Have, Want int64
	// Arch is the file's architecture and Supported those Churon runs
	// (LoadUnsupported).
	Arch      string
	Supported []string
	Err       error
}

func (e *LoadError) Error() string { return "session: load " + e.Path + ": " + e.Err.Error() }
func (e *LoadError) Unwrap() error { return e.Err }
