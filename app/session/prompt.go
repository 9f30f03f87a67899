package session

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/churon/churon/app/store"
	"github.com/churon/churon/engine"
	"github.com/churon/churon/engine/chat"
)

// prompt is an answer's prompt once the overflow policy has been applied.
type prompt struct {
	ids     []int32
	dropped int            // oldest messages left out
	notice  *store.Message // to store before the answer: turns newly left out
}

// answerRoom is how much of the context an answer should find free: its
// cap, or an eighth of the context when it has none, so that a prompt
// that only just fits does not leave the answer a few tokens.
func answerRoom(set Settings, ctxLen int) int {
	if set.MaxTokens > 0 {
		return min(set.MaxTokens, ctxLen/2)
	}
	return ctxLen / 8
}

// buildPrompt renders and tokenizes the conversation for its next answer.
// Notices are for the person and never part of a prompt.
//
// When the prompt and the answer's room exceed the context, OverflowStop
// fails with ErrTooLong once the prompt alone does not fit, and
// OverflowDrop leaves out the oldest whole turns (a turn starts with a
// person's message), keeping the system prompt and the newest turns. It
// drops until the prompt fills at most three quarters of what the answer
// leaves: every drop changes the prompt's start, so what is kept must be
// processed again; the slack lets the next turns reuse the cache until
// the conversation outgrows the context again. Where the last notice left
// off is kept while it still fits, for the same reason.
func buildPrompt(ctx context.Context, model *engine.Model, set Settings, hist []Message, ctxLen int) (prompt, error) {
	var visible []Message
	var last Notice
	for _, h := range hist {
		if h.Role == store.RoleNotice {
			if n, ok := ParseNotice(h); ok && n.Kind == NoticeDropped {
				last = n
			}
			continue
		}
		visible = append(visible, h)
	}
	render := func(from int) ([]int32, error) {
		msgs := make([]chat.Message, 0, len(visible)-from+1)
		if set.SystemPrompt != "" {
			msgs = append(msgs, chat.Message{Role: "system", Content: set.SystemPrompt})
		}
		for _, h := range visible[from:] {
			msgs = append(msgs, chat.Message{Role: string(h.Role), Content: h.Content})
		}
		ids, _, err := model.ChatTokens(ctx, msgs)
		return ids, err
	}
	tooLong := func(n int) error {
		return fmt.Errorf("%w: %d prompt tokens, context %d", ErrTooLong, n, ctxLen)
	}

	from := 0
	if set.Overflow != OverflowStop && last.FirstKept != 0 {
		for i, h := range visible {
			if h.ID == last.FirstKept {
				from = i
			}
		}
	}
	ids, err := render(from)
	if err != nil {
		return prompt{}, err
	}
	room := answerRoom(set, ctxLen)
	if set.Overflow == OverflowStop {
		if len(ids) >= ctxLen {
			return prompt{}, tooLong(len(ids))
		}
		return prompt{ids: ids}, nil
	}
	if len(ids)+room <= ctxLen {
		return prompt{ids: ids, dropped: from}, nil
	}
	limit, target := ctxLen-room, (ctxLen-room)*3/4
	best, fit, newest := -1, -1, -1
	var bestIDs, fitIDs, newestIDs []int32
	for i := from + 1; i < len(visible); i++ {
		if visible[i].Role != store.RoleUser {
			continue
		}
		cand, err := render(i)
		if err != nil {
			return prompt{}, err
		}
		newest, newestIDs = i, cand
		if fit < 0 && len(cand) <= limit {
			fit, fitIDs = i, cand
		}
		if len(cand) <= target {
			best, bestIDs = i, cand
			break
		}
	}
	var chosen int
	switch {
	case best >= 0:
		chosen, ids = best, bestIDs
	case fit >= 0: // keeps more than dropping down to the target would
		chosen, ids = fit, fitIDs
	case newest >= 0 && len(newestIDs) < ctxLen: // the newest turn alone, with less room
		chosen, ids = newest, newestIDs
	case newest < 0 && len(ids) < ctxLen: // nothing left to drop
		return prompt{ids: ids, dropped: from}, nil
	case newest >= 0:
		return prompt{}, tooLong(len(newestIDs))
	default:
		return prompt{}, tooLong(len(ids))
	}
	meta, _ := json.Marshal(Notice{Kind: NoticeDropped, Dropped: chosen, FirstKept: visible[chosen].ID})
	notice := &store.Message{
		ConversationID: visible[0].ConversationID, Role: store.RoleNotice, Sampler: string(meta),
		Content: fmt.Sprintf("Older messages are no longer seen by the model: the first %d messages of this chat do not fit in its context of %d tokens.", chosen, ctxLen),
	}
	return prompt{ids: ids, dropped: chosen, notice: notice}, nil
}
