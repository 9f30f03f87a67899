package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/churon/churon/app/api/openai"
	"github.com/churon/churon/app/api/session"
)

// TestModelsAndChat: the model list, a chat completion, the same answer
// streamed (server-sent events: the role first, text deltas, the finish
// reason, usage last with include_usage, then [DONE]), and a plain
// completion.
func TestModelsAndChat(t *testing.T) {
	f := newFixture(t, fixtureOpt{})
	var list openai.ModelList
	status, body, _ := f.do(http.MethodGet, "/v1/models", "")
	if err := json.Unmarshal([]byte(body), &list); status != 200 || err != nil || len(list.Data) != 1 || list.Data[0].ID != "stories260K" || list.Object != "list" {
		t.Fatalf("models: %d %s", status, body)
	}
	if status, _, _ := f.do(http.MethodGet, "/v1/models/stories260K", ""); status != 200 {
		t.Fatalf("GET /v1/models/stories260K: %d", status)
	}
	req := `{"model":"stories260K","messages":[{"role":"user","content":"Once upon a time"}],"max_tokens":16,"temperature":0}`
	var plain openai.ChatChunk
	f.post("/v1/chat/completions", req, &plain)
	if len(plain.Choices) != 1 || plain.Object != "chat.completion" || plain.Usage == nil || plain.Usage.CompletionTokens != 16 {
		t.Fatalf("chat: %+v", plain)
	}
	ch := plain.Choices[0]
	if ch.Message == nil || ch.Message.Role != "assistant" || ch.Message.Content == nil || *ch.Message.Content == "" || ch.FinishReason == nil || *ch.FinishReason != "length" {
		t.Fatalf("chat choice: %+v", ch)
	}
	text := *ch.Message.Content

	stream := strings.Replace(req, `"temperature":0`, `"temperature":0,"stream":true,"stream_options":{"include_usage":true}`, 1)
	chunks, done := f.streamChat(stream)
	if !done || len(chunks) < 3 {
		t.Fatalf("stream: %d chunks, done %v", len(chunks), done)
	}
	if d := chunks[0].Choices[0].Delta; d == nil || d.Role != "assistant" {
		t.Fatalf("the first chunk does not give the role: %+v", chunks[0])
	}
	var streamed string
	var finish string
	for _, c := range chunks[:len(chunks)-1] {
		if c.Object != "chat.completion.chunk" || c.ID != chunks[0].ID || len(c.Choices) != 1 {
			t.Fatalf("chunk %+v", c)
		}
		if d := c.Choices[0].Delta; d != nil && d.Content != nil {
			streamed += *d.Content
		}
		if fr := c.Choices[0].FinishReason; fr != nil {
			finish = *fr
		}
	}
	last := chunks[len(chunks)-1]
	if streamed != text || finish != "length" {
		t.Fatalf("streamed %q (%s), plain %q", streamed, finish, text)
	}
	if len(last.Choices) != 0 || last.Usage == nil || last.Usage.CompletionTokens != 16 || last.Usage.PromptTokensDetails.CachedTokens == 0 {
		t.Fatalf("the usage chunk: %+v", last)
	}

	var comp textCompletion
	f.post("/v1/completions", `{"prompt":"Once upon a time","max_tokens":8,"temperature":0,"logprobs":2}`, &comp)
	if len(comp.Choices) != 1 || comp.Choices[0].Text == "" || comp.Usage.CompletionTokens != 8 || comp.Object != "text_completion" {
		t.Fatalf("completion %+v", comp)
	}
	if lp := comp.Choices[0].Logprobs; lp == nil || len(lp.Tokens) != 8 || len(lp.TopLogprobs[0]) != 2 || strings.Join(lp.Tokens, "") != comp.Choices[0].Text {
		t.Fatalf("completion logprobs %+v for %q", comp.Choices[0].Logprobs, comp.Choices[0].Text)
	}
	if st := f.waitIdle(); st.Served != 3 || len(st.Log) != 3 || !strings.Contains(f.log.String(), "/v1/completions 200 model=stories260K in=5 cached=") {
		t.Fatalf("status %+v, log %q", st, f.log.String())
	}
}

// TestStopSequence: an answer stops before its stop sequence, with
// finish_reason "stop", streamed or not.
func TestStopSequence(t *testing.T) {
	f := newFixture(t, fixtureOpt{})
	var full openai.ChatChunk
	f.post("/v1/chat/completions", `{"messages":[{"role":"user","content":"Once upon a time"}],"max_tokens":24,"temperature":0}`, &full)
	text := *full.Choices[0].Message.Content
	words := strings.Fields(text)
	if len(words) < 3 {
		t.Fatalf("a short answer: %q", text)
	}
	stop := words[2]
	var cut openai.ChatChunk
	f.post("/v1/chat/completions", fmt.Sprintf(`{"messages":[{"role":"user","content":"Once upon a time"}],"max_tokens":24,"temperature":0,"stop":%q}`, stop), &cut)
	got := *cut.Choices[0].Message.Content
	if strings.Contains(got, stop) || !strings.HasPrefix(text, got) || *cut.Choices[0].FinishReason != "stop" {
		t.Fatalf("stop %q: %q (%s); whole %q", stop, got, *cut.Choices[0].FinishReason, text)
	}
	chunks, _ := f.streamChat(fmt.Sprintf(`{"messages":[{"role":"user","content":"Once upon a time"}],"max_tokens":24,"temperature":0,"stream":true,"stop":[%q]}`, stop))
	var streamed, finish string
	for _, c := range chunks {
		if d := c.Choices[0].Delta; d != nil && d.Content != nil {
			streamed += *d.Content
		}
		if fr := c.Choices[0].FinishReason; fr != nil {
			finish = *fr
		}
	}
	if streamed != got || finish != "stop" {
		t.Fatalf("streamed with stop %q: %q (%s), not streamed %q", stop, streamed, finish, got)
	}
}

// TestClientGoesAway: a client that drops its stream cancels the answer:
// the request ends as cancelled, far short of its max_tokens, and the
// session answers nothing more for it.
func TestClientGoesAway(t *testing.T) {
	f := newFixture(t, fixtureOpt{})
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, f.base+"/v1/chat/completions",
		strings.NewReader(`{"messages":[{"role":"user","content":"Once upon a time"}],"max_tokens":1500,"temperature":0,"stream":true}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 256)
	if _, err := io.ReadAtLeast(resp.Body, buf, 200); err != nil {
		t.Fatal(err)
	}
	cancel() // the connection closes
	resp.Body.Close()
	st := f.waitIdle()
	e := st.Log[len(st.Log)-1]
	if e.Finish != string(session.ReasonCancelled) || e.CompletionTokens >= 1500 {
		t.Fatalf("after the client went away: %+v", e)
	}
	if s, _ := f.m.Status(); s.Requests != 0 || s.RequestsQueued != 0 {
		t.Fatalf("the session still answers: %+v", s)
	}
}

// TestCachedAcrossRestart: a request continuing the previous one's
// conversation reports cached tokens, and still does after the server
// and the session restart (from the KV snapshot).
func TestCachedAcrossRestart(t *testing.T) {
	diskDir, dbDir := t.TempDir(), t.TempDir()
	model := chatModel(t)
	f := newFixture(t, fixtureOpt{disk: openDisk(t, diskDir), model: model, dbDir: dbDir})
	msgs := `{"role":"system","content":"Be brief."},{"role":"user","content":"Hello there"}`
	var first openai.ChatChunk
	f.post("/v1/chat/completions", `{"messages":[`+msgs+`],"max_tokens":12,"temperature":0}`, &first)
	ans, _ := json.Marshal(*first.Choices[0].Message.Content)
	msgs += `,{"role":"assistant","content":` + string(ans) + `},{"role":"user","content":"And then?"}`
	var second openai.ChatChunk
	f.post("/v1/chat/completions", `{"messages":[`+msgs+`],"max_tokens":12,"temperature":0}`, &second)
	if c := second.Usage.PromptTokensDetails.CachedTokens; c < first.Usage.PromptTokens {
		t.Fatalf("the follow-up reused %d tokens; the first prompt had %d", c, first.Usage.PromptTokens)
	}
	f.close()

	g := newFixture(t, fixtureOpt{disk: openDisk(t, diskDir), model: model, dbDir: dbDir})
	ans, _ = json.Marshal(*second.Choices[0].Message.Content)
	msgs += `,{"role":"assistant","content":` + string(ans) + `},{"role":"user","content":"Thanks."}`
	var third openai.ChatChunk
	g.post("/v1/chat/completions", `{"messages":[`+msgs+`],"max_tokens":12,"temperature":0}`, &third)
	if c := third.Usage.PromptTokensDetails.CachedTokens; c < second.Usage.PromptTokens {
		t.Fatalf("after a restart the request reused %d tokens; the previous prompt had %d", c, second.Usage.PromptTokens)
	}
	if list, _ := g.m.ListConversations(); len(list) != 0 {
		t.Fatalf("requests were stored without the switch: %+v", list)
	}
}

// TestConcurrentEqualsSequential: four greedy requests at once answer
// exactly what the same four give one at a time.
func TestConcurrentEqualsSequential(t *testing.T) {
	f := newFixture(t, fixtureOpt{})
	prompts := []string{"Once upon a time", "The little dog", "Lily and Ben went to", "Sam had a big red ball and"}
	body := func(p string) string {
		return fmt.Sprintf(`{"messages":[{"role":"user","content":%q}],"max_tokens":48,"temperature":0}`, p)
	}
	alone := make([]string, len(prompts))
	for i, p := range prompts {
		var c openai.ChatChunk
		f.post("/v1/chat/completions", body(p), &c)
		alone[i] = *c.Choices[0].Message.Content
	}
	// Fresh caches: a restart of nothing but the slots' use would reuse;
	// the same prompts again reuse their own, which changes no bit.
	together := make([]string, len(prompts))
	var wg sync.WaitGroup
	for i, p := range prompts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var c openai.ChatChunk
			f.post("/v1/chat/completions", body(p), &c)
			together[i] = *c.Choices[0].Message.Content
		}()
	}
	wg.Wait()
	for i := range prompts {
		if together[i] != alone[i] {
			t.Errorf("prompt %d at once: %q; alone %q", i, together[i], alone[i])
		}
	}
}

// TestStoredRequests: with Store, chat requests are kept in the history,
// a follow-up in the same conversation; a request may name a stored
// conversation to continue it.
func TestStoredRequests(t *testing.T) {
	f := newFixture(t, fixtureOpt{cfg: Config{Store: true}})
	var first openai.ChatChunk
	f.post("/v1/chat/completions", `{"messages":[{"role":"user","content":"Once upon a time"}],"max_tokens":8,"temperature":0}`, &first)
	conv := first.Conversation
	if conv == 0 {
		t.Fatalf("a stored request names no conversation: %+v", first)
	}
	ans, _ := json.Marshal(*first.Choices[0].Message.Content)
	var second openai.ChatChunk
	f.post("/v1/chat/completions", `{"messages":[{"role":"user","content":"Once upon a time"},{"role":"assistant","content":`+string(ans)+`},{"role":"user","content":"The end"}],"max_tokens":8,"temperature":0}`, &second)
	if second.Conversation != conv {
		t.Fatalf("the follow-up went to conversation %d, not %d", second.Conversation, conv)
	}
	var named openai.ChatChunk
	f.post("/v1/chat/completions", fmt.Sprintf(`{"conversation":%d,"messages":[{"role":"user","content":"Again"}],"max_tokens":8,"temperature":0}`, conv), &named)
	if named.Conversation != conv || named.Usage.PromptTokensDetails.CachedTokens == 0 {
		t.Fatalf("a request naming the conversation: %+v", named)
	}
	msgs, err := f.m.Messages(conv)
	if err != nil || len(msgs) != 6 || msgs[5].Content != *named.Choices[0].Message.Content {
		t.Fatalf("stored %d messages: %+v %v", len(msgs), msgs, err)
	}
	status, body, _ := f.do(http.MethodPost, "/v1/chat/completions", `{"conversation":999,"messages":[{"role":"user","content":"x"}]}`)
	if status != http.StatusNotFound || !strings.Contains(body, "conversation_not_found") {
		t.Fatalf("a conversation that does not exist: %d %s", status, body)
	}
}

// TestSafety: a key when one is set, loopback Hosts only without one,
// browser origins only when allowed (with CORS headers and preflights
// then), JSON bodies only, and no listening beyond loopback without a
// key.
func TestSafety(t *testing.T) {
	if err := Check(Config{Addr: "0.0.0.0:8080"}); err == nil {
		t.Fatal("listening on every interface without a key was allowed")
	}
	if err := Check(Config{Addr: "0.0.0.0:8080", APIKey: "k"}); err != nil {
		t.Fatalf("with a key: %v", err)
	}
	if err := Check(Config{CORSOrigins: []string{"evil.com"}}); err == nil {
		t.Fatal("a CORS origin without a scheme was taken")
	}
	f := newFixture(t, fixtureOpt{})
	if status, _, _ := f.do(http.MethodGet, "/v1/models", "", "Host", "evil.example:8080"); status != http.StatusForbidden {
		t.Fatalf("a rebinding Host: %d", status)
	}
	if status, _, h := f.do(http.MethodGet, "/v1/models", "", "Origin", "http://evil.example"); status != http.StatusForbidden || h.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("a web page's request without CORS: %d %v", status, h)
	}
	req, _ := http.NewRequest(http.MethodPost, f.base+"/v1/chat/completions", strings.NewReader(`{"messages":[{"role":"user","content":"x"}]}`))
	req.Header.Set("Content-Type", "text/plain")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusUnsupportedMediaType {
		t.Fatalf("a text/plain POST (what a page may send without CORS): %v %v", err, resp.Status)
	}

	g := newFixture(t, fixtureOpt{cfg: Config{APIKey: "s3cret", CORSOrigins: []string{"http://localhost:3000"}}})
	if status, body, _ := g.do(http.MethodGet, "/v1/models", ""); status != http.StatusUnauthorized || !strings.Contains(body, "invalid_api_key") {
		t.Fatalf("without the key: %d %s", status, body)
	}
	if status, _, _ := g.do(http.MethodGet, "/v1/models", "", "Authorization", "Bearer wrong"); status != http.StatusUnauthorized {
		t.Fatalf("a wrong key: %d", status)
	}
	if status, _, _ := g.do(http.MethodGet, "/v1/models", "", "Authorization", "Bearer s3cret"); status != http.StatusOK {
		t.Fatalf("the right key: %d", status)
	}
	status, _, h := g.do(http.MethodOptions, "/v1/chat/completions", "", "Origin", "http://localhost:3000", "Access-Control-Request-Method", "POST")
	if status != http.StatusNoContent || h.Get("Access-Control-Allow-Origin") != "http://localhost:3000" || !strings.Contains(h.Get("Access-Control-Allow-Headers"), "Authorization") {
		t.Fatalf("a preflight from an allowed origin: %d %v", status, h)
	}
	if status, _, h := g.do(http.MethodGet, "/v1/models", "", "Origin", "http://localhost:3000", "Authorization", "Bearer s3cret"); status != 200 || h.Get("Access-Control-Allow-Origin") != "http://localhost:3000" {
		t.Fatalf("an allowed origin: %d %v", status, h)
	}
}

// TestConnectionLimit: past MaxConnections requests in flight, a request
// gets 429 at once; the others are answered.
func TestConnectionLimit(t *testing.T) {
	f := newFixture(t, fixtureOpt{cfg: Config{MaxConnections: 1}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, f.base+"/v1/chat/completions",
		strings.NewReader(`{"messages":[{"role":"user","content":"Once upon a time"}],"max_tokens":1500,"stream":true}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	status, body, h := f.do(http.MethodPost, "/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}],"max_tokens":2}`)
	if status != http.StatusTooManyRequests || h.Get("Retry-After") == "" || !strings.Contains(body, "rate_limit_error") {
		t.Fatalf("a second request past the limit: %d %s", status, body)
	}
	cancel()
	f.waitIdle()
	if status, _, _ := f.do(http.MethodPost, "/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}],"max_tokens":2}`); status != 200 {
		t.Fatalf("after the first ended: %d", status)
	}
}

// TestServerStartStop: the controller starts, says where, stops, and
// starts again; Changed is signalled.
func TestServerStartStop(t *testing.T) {
	f := newFixture(t, fixtureOpt{})
	s := New(Options{Session: f.m})
	if err := s.Start(Config{Addr: "127.0.0.1:0"}); err != nil {
		t.Fatal(err)
	}
	st := s.Status()
	if !st.On || !strings.HasPrefix(st.URL, "http://127.0.0.1:") {
		t.Fatalf("status %+v", st)
	}
	select {
	case <-s.Changed():
	case <-time.After(time.Second):
		t.Fatal("Changed not signalled")
	}
	resp, err := http.Get(strings.TrimSuffix(st.URL, "/v1") + "/v1/models")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET models: %v %v", err, resp)
	}
	resp.Body.Close()
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if st := s.Status(); st.On {
		t.Fatalf("after stop %+v", st)
	}
	if _, err := http.Get(strings.TrimSuffix(st.URL, "/v1") + "/v1/models"); err == nil {
		t.Fatal("still listening after Stop")
	}
	if err := s.Start(Config{Addr: "127.0.0.1:0"}); err != nil {
		t.Fatal(err)
	}
	s.Stop()
}
