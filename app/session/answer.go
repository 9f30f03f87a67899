package session

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	api "github.com/churon/churon/app/api/session"
	box "github.com/churon/churon/internal/outbox"
)

// request is an API request's answer that no conversation stores.
type request struct {
	api.Request
}

// sink carries a request's answer to its requester: the Events of
// api.Answer, through an outbox (never blocking the batch, never
// dropping), text merged while the requester lags.
type sink struct {
	box   *box.Box[api.AnswerEvent]
	asked time.Time
	// usage and firstAt are set by the answer's goroutine before it hands
	// its result to the scheduler, which sends AnswerDone.
	usage   api.Usage
	firstAt time.Time
}

// pendingText is a queued AnswerText that later text may still grow.
type pendingText struct {
	api.AnswerText
	text strings.Builder
}

func (*pendingText) answerEvent() {}

func newSink() *sink {
	b := box.New(box.Hooks[api.AnswerEvent]{
		Wrap: func(ev api.AnswerEvent) api.AnswerEvent {
			if t, ok := ev.(api.AnswerText); ok {
				p := &pendingText{AnswerText: t}
				p.text.WriteString(t.Text)
				return p
			}
			return ev
		},
		Merge: func(last, next api.AnswerEvent) bool {
			p, ok := last.(*pendingText)
			t, isText := next.(api.AnswerText)
			if !ok || !isText || p.Reasoning != t.Reasoning {
				return false
			}
			p.text.WriteString(t.Text)
			p.Logprobs = append(p.Logprobs, t.Logprobs...)
			p.Tokens = t.Tokens
			return true
		},
		Unwrap: func(ev api.AnswerEvent) api.AnswerEvent {
			if p, ok := ev.(*pendingText); ok {
				p.AnswerText.Text = p.text.String()
				return p.AnswerText
			}
			return ev
		},
	})
	return &sink{box: b, asked: time.Now()}
}

func (s *sink) push(ev api.AnswerEvent) { s.box.Push(ev) }

// end sends the answer's AnswerDone and closes Events.
func (s *sink) end(d api.Done) {
	u := s.usage
	if u.Conversation == 0 && d.Conv > 0 {
		u.Conversation = d.Conv
	}
	s.box.Push(api.AnswerDone{Reason: d.Reason, Err: d.Err, Usage: u})
	s.box.Close()
}

// Answer queues an API request's answer (see api.Request) and returns
// its stream. It fails at once with ErrBadRequest (wrapped, with the
// reason) for a malformed request, a settings error, ErrNoModel, or, for
// a named conversation, what Send would fail with; an error found while
// the answer is prepared (ErrTooLong) comes as its AnswerDone. Cancelling
// ctx (the client went away) stops the answer within one token, or drops
// it from the queue.
func (m *Manager) Answer(ctx context.Context, req api.Request) (api.Answer, error) {
	if err := checkRequest(req); err != nil {
		return api.Answer{}, err
	}
	if req.Source == "" {
		req.Source = "api"
	}
	sk := newSink()
	var j *job
	err := m.call(func() error {
		if m.s.closing {
			return api.ErrClosed
		}
		if !m.modelComing() {
			return api.ErrNoModel
		}
		var err error
		switch {
		case req.Conversation > 0:
			j, err = m.askInConversation(req.Conversation, req)
		case req.Store:
			j, err = m.askStored(req)
		default:
			j = m.enqueue(0, req.Settings, req.Source)
			j.req = &request{Request: req}
		}
		if err != nil {
			return err
		}
		j.sink, j.logprobs, j.topLogprobs = sk, req.Logprobs, req.TopLogprobs
		return nil
	})
	if err != nil {
		sk.box.Close()
		return api.Answer{}, err
	}
	context.AfterFunc(ctx, func() {
		_ = m.call(func() error {
			m.drop(j)
			return nil
		})
	})
	return api.Answer{Events: sk.box.Out()}, nil
}

// checkRequest refuses a request the session cannot answer as it is.
func checkRequest(req api.Request) error {
	if err := Validate(req.Settings); err != nil {
		return fmt.Errorf("%w: %v", api.ErrBadRequest, err)
	}
	if req.TopLogprobs < 0 || req.TopLogprobs > 20 {
		return fmt.Errorf("%w: top_logprobs %d: want 0 to 20", api.ErrBadRequest, req.TopLogprobs)
	}
	if len(req.Messages) == 0 {
		if req.Prompt == "" {
			return fmt.Errorf("%w: neither messages nor a prompt", api.ErrBadRequest)
		}
		if req.Conversation > 0 || req.Store {
			return fmt.Errorf("%w: a plain completion cannot be stored in a conversation", api.ErrBadRequest)
		}
		return nil
	}
	for i, msg := range req.Messages {
		switch msg.Role {
		case "system", "user", "assistant":
		default:
			return fmt.Errorf("%w: message %d has role %q: want system, user or assistant", api.ErrBadRequest, i, msg.Role)
		}
	}
	if last := req.Messages[len(req.Messages)-1]; (req.Conversation > 0 || req.Store) && last.Role != "user" {
		return fmt.Errorf("%w: a stored conversation's turn must end with the user's message, not the %s's", api.ErrBadRequest, last.Role)
	}
	return nil
}

// drop cancels an answer: one running stops within one token; a waiting
// one ends at once as cancelled. An answer that has ended is left alone.
func (m *Manager) drop(j *job) {
	j.cancel()
	if slices.Contains(m.s.active, j) {
		return
	}
	i := slices.Index(m.s.queue, j)
	if i < 0 {
		return
	}
	m.s.queue = slices.Delete(m.s.queue, i, i+1)
	if cs := m.s.convs[j.conv]; j.conv != 0 && cs != nil && cs.job == j {
		cs.job = nil
	}
	m.ended(j, api.Done{Conv: j.conv, Reason: api.ReasonCancelled})
	m.uncut(j)
}
