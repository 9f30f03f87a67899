package session

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"strconv"

	api "github.com/churon/churon/app/api/session"
	"github.com/churon/churon/app/store"
	"github.com/churon/churon/engine"
	"github.com/churon/churon/engine/chat"
)

// prompt is an answer's prompt once the overflow policy has been applied.
type prompt struct {
	ids     []int32
	text    string         // the rendered text ids tokenize
	dropped int            // oldest messages left out
	notice  *store.Message // to store before the answer: turns newly left out
}

// answerRoom is how much of the context an answer should find free: its
// cap, or an eighth of the context when it has none, so that a prompt
// that only just fits does not leave the answer a few tokens.
func answerRoom(set api.Settings, ctxLen int) int {
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
func buildPrompt(ctx context.Context, model *engine.Model, set api.Settings, hist []api.Message, ctxLen int) (prompt, error) {
	var visible []api.Message
	var last api.Notice
	for _, h := range hist {
		if h.Role == store.RoleNotice {
			if n, ok := api.ParseNotice(h); ok && n.Kind == api.NoticeDropped {
				last = n
			}
			continue
		}
		visible = append(visible, h)
	}
	render := func(from int) (prompt, error) {
		ids, text, err := model.ChatTokensWith(ctx, chatMessages(set, visible[from:]), templateVars(set))
		return prompt{ids: ids, text: text, dropped: from}, err
	}
	tooLong := func(n int) error {
		return fmt.Errorf("%w: %d prompt tokens, context %d", api.ErrTooLong, n, ctxLen)
	}

	from := 0
	if set.Overflow != api.OverflowStop && last.FirstKept != 0 {
		for i, h := range visible {
			if h.ID == last.FirstKept {
				from = i
			}
		}
	}
	whole, err := render(from)
	if err != nil {
		return prompt{}, err
	}
	room := answerRoom(set, ctxLen)
	if set.Overflow == api.OverflowStop {
		if len(whole.ids) >= ctxLen {
			return prompt{}, tooLong(len(whole.ids))
		}
		return whole, nil
	}
	if len(whole.ids)+room <= ctxLen {
		return whole, nil
	}
	limit, target := ctxLen-room, (ctxLen-room)*3/4
	best, fit, newest := -1, -1, -1
	var bestPr, fitPr, newestPr prompt
	for i := from + 1; i < len(visible); i++ {
		if visible[i].Role != store.RoleUser {
			continue
		}
		cand, err := render(i)
		if err != nil {
			return prompt{}, err
		}
		newest, newestPr = i, cand
		if fit < 0 && len(cand.ids) <= limit {
			fit, fitPr = i, cand
		}
		if len(cand.ids) <= target {
			best, bestPr = i, cand
			break
		}
	}
	var chosen int
	var pr prompt
	switch {
	case best >= 0:
		chosen, pr = best, bestPr
	case fit >= 0: // keeps more than dropping down to the target would
		chosen, pr = fit, fitPr
	case newest >= 0 && len(newestPr.ids) < ctxLen: // the newest turn alone, with less room
		chosen, pr = newest, newestPr
	case newest < 0 && len(whole.ids) < ctxLen: // nothing left to drop
		return whole, nil
	case newest >= 0:
		return prompt{}, tooLong(len(newestPr.ids))
	default:
		return prompt{}, tooLong(len(whole.ids))
	}
	meta, _ := json.Marshal(api.Notice{Kind: api.NoticeDropped, Dropped: chosen, FirstKept: visible[chosen].ID})
	notice := &store.Message{
		ConversationID: visible[0].ConversationID, Role: store.RoleNotice, Sampler: string(meta),
		Content: fmt.Sprintf("Older messages are no longer seen by the model: the first %d messages of this chat do not fit in its context of %d tokens.", chosen, ctxLen),
	}
	pr.notice = notice
	return pr, nil
}

// visibleFrom is the prompt's messages: hist without notices, less the
// dropped oldest ones.
func visibleFrom(hist []api.Message, dropped int) []api.Message {
	var visible []api.Message
	for _, h := range hist {
		if h.Role != store.RoleNotice {
			visible = append(visible, h)
		}
	}
	return visible[min(dropped, len(visible)):]
}

// chatMessages is what the template renders for msgs: the system prompt,
// then each message.
func chatMessages(set api.Settings, msgs []api.Message) []chat.Message {
	out := make([]chat.Message, 0, len(msgs)+1)
	if set.SystemPrompt != "" {
		out = append(out, chat.Message{Role: "system", Content: set.SystemPrompt})
	}
	for _, h := range msgs {
		// Reasoning goes to the template under both names templates read
		// it by; the template decides whether an earlier turn's thinking
		// is part of the prompt (Qwen3's and Harmony's leave it out).
		out = append(out, chat.Message{Role: string(h.Role), Content: h.Content,
			ReasoningContent: h.Reasoning, Thinking: h.Reasoning})
	}
	return out
}

// templateVars are the chat's switches a template reads: Qwen3's
// enable_thinking when the chat turned thinking off (left unset
// otherwise, so that each template keeps its own default).
func templateVars(set api.Settings) map[string]any {
	if set.ThinkingOff {
		return map[string]any{"enable_thinking": false}
	}
	return nil
}

// keepAnswer is the prompt pr with the ids the model generated for the
// conversation's last answer in place of its text tokenized again, when
// the cache (cached) is still the one that answer left: a follow-up then
// reuses the whole answer, as it would not where the answer's text
// tokenizes to other ids (see engine.Model.FollowUp). It reports false
// otherwise — an edited or regenerated turn, a dropped one, another
// model's answer, a stop string cut from the text — and the canonical
// prompt stands.
func keepAnswer(ctx context.Context, model *engine.Model, set api.Settings, hist []api.Message, pr prompt, cached []int32, ctxLen int) ([]int32, bool) {
	msgs := visibleFrom(hist, pr.dropped)
	n := len(msgs)
	if n < 2 || msgs[n-1].Role != store.RoleUser || msgs[n-2].Role != store.RoleAssistant {
		return nil, false
	}
	a := msgs[n-2]
	if a.PromptTokens <= 0 || a.PromptTokens > len(cached) || a.FinishReason == string(api.ReasonStop) {
		return nil, false
	}
	// The cache must still start with the very prompt the answer came
	// from — another version of an earlier message, answered since,
	// leaves the cache holding another history of the same length — and
	// that prompt must be this one's start: the same system prompt, the
	// same turns left out.
	fp, ok := promptFingerprint(a.Sampler)
	if !ok || fp.Tokens != fingerprint(cached[:a.PromptTokens]) {
		return nil, false
	}
	before, err := model.RenderChatWith(ctx, chatMessages(set, msgs[:n-2]), true, templateVars(set))
	if err != nil || fp.Text != textFingerprint(before) {
		return nil, false
	}
	ids, ok := model.FollowUp(cached, a.PromptTokens, a.GenTokens, before, a.Content, pr.text)
	// Generated ids can take more room than the text tokenized again: the
	// overflow policy measured the latter, so the former must fit as well.
	if !ok || len(ids) > len(pr.ids) && len(ids)+answerRoom(set, ctxLen) > ctxLen {
		return nil, false
	}
	return ids, true
}

// fingerprintKey is where an answer's Sampler JSON, beside the settings it
// was generated with, records the prompt it was generated from: a
// follow-up keeps the answer's generated ids only in a cache that still
// starts with those tokens, for a conversation whose prompt still starts
// with that text (keepAnswer).
const fingerprintKey = "prompt_fingerprint"

// promptPrint identifies a prompt: 64-bit FNV-1a hashes, in hex, of its
// tokens and of its rendered text.
type promptPrint struct {
	Tokens string `json:"tokens"`
	Text   string `json:"text"`
}

func fingerprint(ids []int32) string {
	h := fnv.New64a()
	var b [4]byte
	for _, id := range ids {
		binary.LittleEndian.PutUint32(b[:], uint32(id))
		h.Write(b[:])
	}
	return strconv.FormatUint(h.Sum64(), 16)
}

func textFingerprint(s string) string {
	h := fnv.New64a()
	h.Write([]byte(s))
	return strconv.FormatUint(h.Sum64(), 16)
}

// withFingerprint adds the prompt's print — its tokens ids, its text — to
// sampler JSON.
func withFingerprint(sampler string, ids []int32, text string) string {
	var m map[string]json.RawMessage
	if json.Unmarshal([]byte(sampler), &m) != nil || m == nil {
		return sampler
	}
	fp, _ := json.Marshal(promptPrint{Tokens: fingerprint(ids), Text: textFingerprint(text)})
	m[fingerprintKey] = fp
	b, err := json.Marshal(m)
	if err != nil {
		return sampler
	}
	return string(b)
}

// promptFingerprint reads what withFingerprint wrote.
func promptFingerprint(sampler string) (promptPrint, bool) {
	var v map[string]json.RawMessage
	if json.Unmarshal([]byte(sampler), &v) != nil {
		return promptPrint{}, false
	}
	var fp promptPrint
	if json.Unmarshal(v[fingerprintKey], &fp) != nil || fp.Tokens == "" || fp.Text == "" {
		return promptPrint{}, false
	}
	return fp, true
}
