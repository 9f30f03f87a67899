package session

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	api "github.com/churon/churon/app/api/session"
	"github.com/churon/churon/app/kvcache"
	"github.com/churon/churon/engine"
	"github.com/churon/churon/engine/chat"
	"github.com/churon/churon/internal/testdata"
)

// answerAll sends req and reads its answer to the end.
func answerAll(t *testing.T, m *Manager, req api.Request) (string, api.AnswerStarted, api.AnswerDone) {
	t.Helper()
	ans, err := m.Answer(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	var text string
	var started api.AnswerStarted
	var done api.AnswerDone
	seen := false
	timeout := time.After(waitLimit)
	for {
		select {
		case ev, ok := <-ans.Events:
			if !ok {
				if !seen {
					t.Fatal("the answer's events closed without an AnswerDone")
				}
				return text, started, done
			}
			switch e := ev.(type) {
			case api.AnswerStarted:
				started = e
			case api.AnswerText:
				if !e.Reasoning {
					text += e.Text
				}
			case api.AnswerDone:
				done, seen = e, true
			}
		case <-timeout:
			t.Fatal("no end of the answer in time")
		}
	}
}

func chatOf(msgs []api.RequestMessage) []chat.Message {
	out := make([]chat.Message, len(msgs))
	for i, m := range msgs {
		out[i] = chat.Message{Role: m.Role, Content: m.Content}
	}
	return out
}

// TestAnswerReusesAcrossRequests: an API request that no conversation
// stores is what the engine alone answers; the next request, which
// extends its messages with the answer and a new question, reuses its KV
// cache (in memory), and so does one after a restart (from the
// snapshot), each answer still the engine's own.
func TestAnswerReusesAcrossRequests(t *testing.T) {
	path := synthPath(t, "qwen2")
	disk, err := kvcache.Open(t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	set := greedy(16)
	msgs := []api.RequestMessage{{Role: "system", Content: "You are terse."}, {Role: "user", Content: "Name a colour."}}
	f := newFixture(t, Options{Disk: disk})
	f.load(path)
	text, started, done := answerAll(t, f.m, api.Request{Messages: msgs, Settings: set})
	if done.Err != nil || done.Reason != api.ReasonLength {
		t.Fatalf("first request: %+v", done)
	}
	if _, want := engineAnswer(t, path, set, engine.KVF16, chatOf(msgs)); text != want {
		t.Fatalf("first request: %q, the engine alone %q", text, want)
	}
	if done.Usage.CachedTokens != 0 || done.Usage.CompletionTokens != 16 || started.PromptTokens != done.Usage.PromptTokens || done.Usage.TTFT <= 0 {
		t.Fatalf("first request's usage %+v, started %+v", done.Usage, started)
	}
	first := done.Usage.PromptTokens
	if msgs, err := f.m.ListConversations(); err != nil || len(msgs) != 0 {
		t.Fatalf("an unstored request made conversations: %v %v", msgs, err)
	}

	msgs = append(msgs, api.RequestMessage{Role: "assistant", Content: text}, api.RequestMessage{Role: "user", Content: "Another."})
	text2, _, done2 := answerAll(t, f.m, api.Request{Messages: msgs, Settings: set})
	if done2.Usage.CachedTokens < first {
		t.Fatalf("the follow-up reused %d tokens; the first prompt alone was %d", done2.Usage.CachedTokens, first)
	}
	if _, want := engineAnswer(t, path, set, engine.KVF16, chatOf(msgs)); text2 != want {
		t.Fatalf("follow-up %q, the engine alone %q", text2, want)
	}
	f.m.Close()

	// A restart: the slot's snapshot serves the next turn.
	g := newFixture(t, Options{Disk: disk})
	g.load(path)
	msgs = append(msgs, api.RequestMessage{Role: "assistant", Content: text2}, api.RequestMessage{Role: "user", Content: "And one more."})
	text3, _, done3 := answerAll(t, g.m, api.Request{Messages: msgs, Settings: set})
	if done3.Usage.CachedTokens < done2.Usage.PromptTokens {
		t.Fatalf("after a restart the request reused %d tokens; the previous prompt was %d", done3.Usage.CachedTokens, done2.Usage.PromptTokens)
	}
	if _, want := engineAnswer(t, path, set, engine.KVF16, chatOf(msgs)); text3 != want {
		t.Fatalf("after a restart %q, the engine alone %q", text3, want)
	}
	// An unrelated request (which may share the template's opening) takes
	// another slot and leaves that cache alone.
	other := []api.RequestMessage{{Role: "user", Content: "Something else entirely."}}
	if _, _, d := answerAll(t, g.m, api.Request{Messages: other, Settings: set}); d.Err != nil || d.Usage.CachedTokens >= done3.Usage.CachedTokens {
		t.Fatalf("an unrelated request: %+v", d)
	}
	msgs = append(msgs, api.RequestMessage{Role: "assistant", Content: text3}, api.RequestMessage{Role: "user", Content: "Last."})
	if _, _, d := answerAll(t, g.m, api.Request{Messages: msgs, Settings: set}); d.Usage.CachedTokens < done3.Usage.PromptTokens {
		t.Fatalf("after an unrelated request the conversation's next turn reused %d tokens, want at least %d", d.Usage.CachedTokens, done3.Usage.PromptTokens)
	}
}

// TestAnswerCompletionAndLogprobs: a plain completion is the engine's
// continuation of its prompt, with a logprob for each token.
func TestAnswerCompletionAndLogprobs(t *testing.T) {
	f, path := storiesFixture(t)
	ans, err := f.m.Answer(context.Background(), api.Request{Prompt: "Once upon a time", Settings: greedy(12), Logprobs: true, TopLogprobs: 2})
	if err != nil {
		t.Fatal(err)
	}
	var text string
	var lps []api.TokenLogprob
	var done api.AnswerDone
	for ev := range ans.Events {
		switch e := ev.(type) {
		case api.AnswerText:
			text += e.Text
			lps = append(lps, e.Logprobs...)
		case api.AnswerDone:
			done = e
		}
	}
	model := loadEngineModel(t, path)
	seq, _ := model.NewSequence(engine.SequenceOptions{Context: 512})
	want, err := seq.Generate(context.Background(), model.TokenizePrompt("Once upon a time", true, true), engine.GenerateOptions{MaxTokens: 12, Sampling: Params(greedy(12), 1)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if text != want.Text || done.Usage.CompletionTokens != 12 {
		t.Fatalf("completion %q (%+v), the engine alone %q", text, done, want.Text)
	}
	if len(lps) != 12 {
		t.Fatalf("%d logprobs for 12 tokens", len(lps))
	}
	var joined string
	for i, lp := range lps {
		joined += lp.Token
		if lp.Logprob > 0 || len(lp.Top) != 2 || lp.Top[0].Logprob != lp.Logprob || lp.Top[0].Token != lp.Token {
			t.Errorf("token %d: %+v (greedy: the top one is the token)", i, lp)
		}
	}
	if strings.TrimSpace(joined) != strings.TrimSpace(text) {
		t.Errorf("the tokens spell %q, the text is %q", joined, text)
	}
}

// TestAnswerErrors: malformed requests are refused at once; one whose
// prompt does not fit ends before it starts, with ErrTooLong; a request
// whose client goes away stops within a token; none of it stores
// anything or disturbs the next request.
func TestAnswerErrors(t *testing.T) {
	f := newFixture(t, Options{})
	if _, err := f.m.Answer(context.Background(), api.Request{Prompt: "x", Settings: greedy(4)}); !errors.Is(err, api.ErrNoModel) {
		t.Fatalf("without a model: %v", err)
	}
	f.load(testdata.Stories260K(t))
	bad := []api.Request{
		{Settings: greedy(4)},
		{Messages: []api.RequestMessage{{Role: "robot", Content: "x"}}, Settings: greedy(4)},
		{Prompt: "x", Settings: api.Settings{TopP: 0}},
		{Prompt: "x", Settings: greedy(4), TopLogprobs: 21},
		{Prompt: "x", Settings: greedy(4), Store: true},
		{Messages: []api.RequestMessage{{Role: "user", Content: "x"}, {Role: "assistant", Content: "y"}}, Settings: greedy(4), Store: true},
	}
	for i, req := range bad {
		if _, err := f.m.Answer(context.Background(), req); !errors.Is(err, api.ErrBadRequest) {
			t.Errorf("bad request %d: %v", i, err)
		}
	}
	long := greedy(4)
	long.Context = 16
	_, started, done := answerAll(t, f.m, api.Request{Prompt: strings.Repeat("Once upon a time ", 20), Settings: long})
	if !errors.Is(done.Err, api.ErrTooLong) || started.PromptTokens != 0 {
		t.Fatalf("a prompt longer than the context: %+v (started %+v)", done, started)
	}
	capped := greedy(600) // with a context of 512
	_, _, done = answerAll(t, f.m, api.Request{Prompt: "Once upon a time", Settings: capped})
	if !errors.Is(done.Err, api.ErrTooLong) {
		t.Fatalf("max_tokens past the context: %+v", done)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ans, err := f.m.Answer(ctx, api.Request{Prompt: "Once upon a time", Settings: uncapped()})
	if err != nil {
		t.Fatal(err)
	}
	got := 0
	for ev := range ans.Events {
		switch e := ev.(type) {
		case api.AnswerText:
			if got++; got == 3 {
				cancel()
			}
		case api.AnswerDone:
			if e.Reason != api.ReasonCancelled || e.Usage.CompletionTokens > 200 {
				t.Fatalf("a request whose client went away: %+v", e)
			}
		}
	}
	if text, _, d := answerAll(t, f.m, api.Request{Prompt: "Once upon a time", Settings: greedy(4)}); d.Err != nil || text == "" {
		t.Fatalf("the next request: %q %+v", text, d)
	}
	if list, _ := f.m.ListConversations(); len(list) != 0 {
		t.Fatalf("requests stored conversations: %+v", list)
	}
}

// TestAnswerInConversation: a request that names a stored conversation
// adds its turn to it; the window sees the answer stream as its own, and
// it is stored.
func TestAnswerInConversation(t *testing.T) {
	f := newFixture(t, Options{})
	path := testdata.Stories260K(t)
	f.load(path)
	conv := f.conv(greedy(8))
	first := f.send(conv, "Once upon a time")
	text, started, done := answerAll(t, f.m, api.Request{Conversation: conv, Messages: []api.RequestMessage{{Role: "user", Content: "The end"}}, Settings: greedy(8)})
	if done.Err != nil || started.Conversation != conv || done.Usage.Conversation != conv || done.Usage.CachedTokens == 0 {
		t.Fatalf("request in conversation %d: started %+v done %+v", conv, started, done)
	}
	tr := f.wait(conv)
	if tr.text != text {
		t.Fatalf("the window saw %q, the request %q", tr.text, text)
	}
	msgs := f.messages(conv)
	if len(msgs) != 4 || msgs[2].Content != "The end" || msgs[3].Content != text {
		t.Fatalf("stored %+v", msgs)
	}
	if want := reference(t, path, greedy(8), "Once upon a time", first.text, "The end"); text != want {
		t.Fatalf("answer %q, the engine alone %q", text, want)
	}
	if _, err := f.m.Answer(context.Background(), api.Request{Conversation: 999, Messages: []api.RequestMessage{{Role: "user", Content: "x"}}, Settings: greedy(4)}); err == nil {
		t.Fatal("a request in a conversation that does not exist was taken")
	}
}

// TestAnswerStored: with the person's switch on, a request is stored as a
// conversation; the next that extends it continues the same conversation;
// another starts its own.
func TestAnswerStored(t *testing.T) {
	f, _ := storiesFixture(t)
	msgs := []api.RequestMessage{{Role: "system", Content: "Tell stories."}, {Role: "user", Content: "Once upon a time"}}
	text, _, done := answerAll(t, f.m, api.Request{Messages: msgs, Settings: greedy(8), Store: true})
	conv := done.Usage.Conversation
	if done.Err != nil || conv == 0 {
		t.Fatalf("stored request: %+v", done)
	}
	f.wait(conv)
	msgs = append(msgs, api.RequestMessage{Role: "assistant", Content: text}, api.RequestMessage{Role: "user", Content: "The end"})
	_, _, done = answerAll(t, f.m, api.Request{Messages: msgs, Settings: greedy(8), Store: true})
	if done.Usage.Conversation != conv || done.Usage.CachedTokens == 0 {
		t.Fatalf("the follow-up went to conversation %d (want %d), reused %d", done.Usage.Conversation, conv, done.Usage.CachedTokens)
	}
	f.wait(conv)
	if c, _ := f.m.Conversation(conv); c.SystemPrompt != "Tell stories." || c.Title != "Once upon a time" {
		t.Fatalf("conversation %+v", c)
	}
	if stored := f.messages(conv); len(stored) != 4 {
		t.Fatalf("stored %d messages, want 4: %+v", len(stored), stored)
	}
	_, _, done = answerAll(t, f.m, api.Request{Messages: []api.RequestMessage{{Role: "user", Content: "Lily"}}, Settings: greedy(4), Store: true})
	if done.Usage.Conversation == conv || done.Usage.Conversation == 0 {
		t.Fatalf("an unrelated request went to conversation %d", done.Usage.Conversation)
	}
}
