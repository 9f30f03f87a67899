package serve

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/churon/churon/app/api/openai"
	"github.com/churon/churon/app/api/session"
)

// fingerprint is the system_fingerprint of every response.
const fingerprint = "churon"

// writer writes one answer as the client asked: as server-sent events
// while it streams, or as one JSON object at its end. The status line
// waits for the answer's start (or its failure before it), so that an
// error such as a prompt too long for the context still gets its 4xx.
type writer struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	c       call
	id      string
	model   string
	created int64

	started   bool // the status line and headers are out
	broken    bool // a write failed: the client is gone or stalled
	text      strings.Builder
	reasoning strings.Builder
	lps       []session.TokenLogprob
	offsets   []int // each logprob's offset in the text (completions)
	tokens    int
}

// result is how an answer went out.
type result struct {
	status int
	done   session.AnswerDone
	err    *apiError // what the client was told went wrong
}

// run writes events until the answer ends, reporting the tokens so far.
// A client that is gone or stalled (a write failed) has its answer
// cancelled (stop); its end is still read, for the record.
func (o *writer) run(ctx context.Context, stop func(), events <-chan session.AnswerEvent, progress func(int)) result {
	var res result
	for ev := range events {
		switch e := ev.(type) {
		case session.AnswerStarted:
			if o.c.stream {
				o.head()
				if o.c.chat { // the role first, as OpenAI sends it
					empty := ""
					o.event(o.chatChunk(&openai.Delta{Role: "assistant", Content: &empty}, nil, nil))
				}
			}
		case session.AnswerText:
			o.tokens = max(o.tokens, e.Tokens)
			progress(o.tokens)
			o.add(e)
		case session.AnswerDone:
			res.done = e
			if o.broken {
				res.status = 499 // as nginx logs a client that went away
				return res
			}
			res.status, res.err = o.end(ctx, e)
			return res
		}
		if o.broken {
			stop()
		}
	}
	res.status = http.StatusInternalServerError
	return res
}

// head sends the status line of a stream.
func (o *writer) head() {
	if o.started {
		return
	}
	o.started = true
	h := o.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	o.w.WriteHeader(http.StatusOK)
	o.flush()
}

// add takes new text: sent at once when streaming, kept otherwise.
func (o *writer) add(e session.AnswerText) {
	if !e.Reasoning {
		for range e.Logprobs {
			o.offsets = append(o.offsets, o.text.Len())
		}
		o.text.WriteString(e.Text)
		o.lps = append(o.lps, e.Logprobs...)
	} else {
		o.reasoning.WriteString(e.Text)
	}
	if !o.c.stream {
		return
	}
	o.head()
	if !o.c.chat {
		o.event(o.textChunk(e.Text, o.textLogprobs(e.Logprobs, len(o.offsets)-len(e.Logprobs)), nil))
		return
	}
	d := &openai.Delta{}
	if e.Reasoning {
		d.ReasoningContent = e.Text
	} else {
		d.Content = &e.Text
	}
	o.event(o.chatChunk(d, o.chatLogprobs(e.Logprobs), nil))
}

// end finishes the answer and returns the status it went out with.
func (o *writer) end(ctx context.Context, e session.AnswerDone) (int, *apiError) {
	if e.Reason == session.ReasonError || e.Err != nil {
		ae := sessionError(errOr(e.Err))
		if !o.started {
			writeError(o.w, ae)
			return ae.Status, ae
		}
		o.event(ae.body()) // mid-stream: the error as an event, then the end
		o.done()
		return http.StatusOK, ae
	}
	if e.Reason == session.ReasonCancelled {
		if ctx.Err() != nil && !o.started { // the client went away: nobody to tell
			return 499, nil
		}
		if !o.started { // the server is stopping, or the model changes
			ae := &apiError{Status: http.StatusServiceUnavailable, Type: typeOverload, Message: "the answer was cancelled: the server is stopping or the model is being changed"}
			writeError(o.w, ae)
			return ae.Status, ae
		}
	}
	finish := finishReason(e.Reason)
	u := &openai.Usage{PromptTokens: e.Usage.PromptTokens, CompletionTokens: e.Usage.CompletionTokens,
		TotalTokens: e.Usage.PromptTokens + e.Usage.CompletionTokens, PromptTokensDetails: &openai.PromptDetails{CachedTokens: e.Usage.CachedTokens}}
	if o.c.stream {
		o.head()
		if o.c.chat {
			o.event(o.chatChunk(&openai.Delta{}, nil, &finish))
		} else {
			o.event(o.textChunk("", nil, &finish))
		}
		if o.c.usage {
			if o.c.chat {
				o.event(openai.ChatChunk{ID: o.id, Object: "chat.completion.chunk", Created: o.created, Model: o.model,
					SystemFingerprint: fingerprint, Choices: []openai.Choice{}, Usage: u, Conversation: e.Usage.Conversation})
			} else {
				o.event(textCompletion{ID: o.id, Object: "text_completion", Created: o.created, Model: o.model,
					SystemFingerprint: fingerprint, Choices: []textChoice{}, Usage: u})
			}
		}
		o.done()
		return http.StatusOK, nil
	}
	if o.c.chat {
		text := o.text.String()
		msg := &openai.Delta{Role: "assistant", Content: &text, ReasoningContent: o.reasoning.String()}
		writeJSON(o.w, http.StatusOK, openai.ChatChunk{ID: o.id, Object: "chat.completion", Created: o.created, Model: o.model,
			SystemFingerprint: fingerprint, Usage: u, Conversation: e.Usage.Conversation,
			Choices: []openai.Choice{{Message: msg, Logprobs: o.chatLogprobs(o.lps), FinishReason: &finish}}})
	} else {
		writeJSON(o.w, http.StatusOK, textCompletion{ID: o.id, Object: "text_completion", Created: o.created, Model: o.model,
			SystemFingerprint: fingerprint, Usage: u,
			Choices: []textChoice{{Text: o.text.String(), Logprobs: o.textLogprobs(o.lps, 0), FinishReason: &finish}}})
	}
	return http.StatusOK, nil
}

func errOr(err error) error {
	if err == nil {
		return errors.New("the answer failed")
	}
	return err
}

// finishReason is OpenAI's word for why an answer ended.
func finishReason(r session.Reason) string {
	switch r {
	case session.ReasonLength, session.ReasonContext:
		return "length"
	}
	return "stop"
}

func (o *writer) chatChunk(d *openai.Delta, lp *openai.Logprobs, finish *string) openai.ChatChunk {
	return openai.ChatChunk{ID: o.id, Object: "chat.completion.chunk", Created: o.created, Model: o.model, SystemFingerprint: fingerprint,
		Choices: []openai.Choice{{Delta: d, Logprobs: lp, FinishReason: finish}}}
}

func (o *writer) textChunk(text string, lp *textLogprobs, finish *string) textCompletion {
	return textCompletion{ID: o.id, Object: "text_completion", Created: o.created, Model: o.model, SystemFingerprint: fingerprint,
		Choices: []textChoice{{Text: text, Logprobs: lp, FinishReason: finish}}}
}

func (o *writer) chatLogprobs(lps []session.TokenLogprob) *openai.Logprobs {
	if !o.c.req.Logprobs {
		return nil
	}
	out := &openai.Logprobs{Content: []openai.TokenLogprob{}}
	for _, lp := range lps {
		top := []openai.TopLogprob{}
		for _, t := range lp.Top {
			top = append(top, openai.TopLogprob{Token: t.Token, Logprob: float64(t.Logprob), Bytes: byteList(t.Bytes)})
		}
		out.Content = append(out.Content, openai.TokenLogprob{Token: lp.Token, Logprob: float64(lp.Logprob), Bytes: byteList(lp.Bytes), TopLogprobs: top})
	}
	return out
}

// textLogprobs is the legacy shape; from is the index of lps[0] among
// the answer's logprobs (for its text offsets).
func (o *writer) textLogprobs(lps []session.TokenLogprob, from int) *textLogprobs {
	if !o.c.req.Logprobs {
		return nil
	}
	out := &textLogprobs{Tokens: []string{}, TokenLogprobs: []float32{}, TopLogprobs: []map[string]float32{}, TextOffset: []int{}}
	for i, lp := range lps {
		out.Tokens = append(out.Tokens, lp.Token)
		out.TokenLogprobs = append(out.TokenLogprobs, lp.Logprob)
		top := map[string]float32{}
		for _, t := range lp.Top {
			top[t.Token] = t.Logprob
		}
		out.TopLogprobs = append(out.TopLogprobs, top)
		if k := from + i; k >= 0 && k < len(o.offsets) {
			out.TextOffset = append(out.TextOffset, o.offsets[k])
		}
	}
	return out
}

func byteList(b []byte) []int {
	out := make([]int, len(b))
	for i, x := range b {
		out[i] = int(x)
	}
	return out
}

// event writes one server-sent event holding v as JSON.
func (o *writer) event(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		return
	}
	o.write("data: " + string(b) + "\n\n")
}

// done ends the stream as OpenAI's does.
func (o *writer) done() { o.write("data: [DONE]\n\n") }

func (o *writer) write(s string) {
	if o.broken {
		return
	}
	// A client that stops reading holds this write, not the batch (the
	// answer waits in memory); one stalled this long is given up.
	_ = o.rc.SetWriteDeadline(time.Now().Add(writeStall))
	if _, err := o.w.Write([]byte(s)); err != nil {
		o.broken = true
		return
	}
	o.flush()
}

func (o *writer) flush() {
	if err := o.rc.Flush(); err != nil {
		o.broken = true
	}
}
