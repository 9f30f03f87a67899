package session

import (
	"fmt"
	"time"

	api "github.com/churon/churon/app/api/session"
	"github.com/churon/churon/engine/chat"
)

// answerParts turns one answer's parsed output into the live answer and
// its Token events: content to Content, reasoning (and tool calls, which
// Churon does not run: a note of each) to Reasoning. It counts the
// tokens that went to reasoning and when the last of them came.
type answerParts struct {
	m          *Manager
	conv, msg  int64
	parser     *chat.OutputParser
	reasTokens int
	reasTime   time.Duration
	// sink, for an answer an API request asked for, hears the text too;
	// lps are the logprobs of the tokens not sent to it yet.
	sink *sink
	lps  []api.TokenLogprob
}

// add applies parts and reports whether any was reasoning.
func (a *answerParts) add(parts []chat.Part, generated int, elapsed time.Duration) (reasoning bool) {
	for _, p := range parts {
		text, isReas := p.Text, p.Kind != chat.PartContent
		if p.Kind == chat.PartToolCall {
			text = toolCallNote(p)
		}
		if text == "" {
			continue
		}
		a.m.liveMu.Lock()
		la := a.m.live[a.msg]
		var off int
		if isReas {
			if p.Kind == chat.PartToolCall && len(la.reasoning) > 0 {
				text = "\n\n" + text
			}
			off = len(la.reasoning)
			la.reasoning = append(la.reasoning, text...)
		} else {
			off = len(la.text)
			la.text = append(la.text, text...)
		}
		a.m.liveMu.Unlock()
		reasoning = reasoning || isReas
		a.m.emit(api.Token{Conv: a.conv, Msg: a.msg, Offset: off, Text: text, Reasoning: isReas, Tokens: generated, Elapsed: elapsed})
		if a.sink != nil {
			a.sink.push(api.AnswerText{Text: text, Reasoning: isReas, Logprobs: a.lps, Tokens: generated})
			a.lps = nil
		}
	}
	return reasoning
}

// toolCallNote is how a tool call the model made reads in its reasoning:
// Churon offers no tools, so a call is the model's thought, not an answer.
func toolCallNote(p chat.Part) string {
	return fmt.Sprintf("→ %s %s", p.Recipient, p.Text)
}
