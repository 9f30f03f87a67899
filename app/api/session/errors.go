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
