package serve

import (
	"context"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"

	"github.com/churon/churon/app/api/openai"
	"github.com/churon/churon/app/api/session"
)

// malformed are requests a server must refuse with a 4xx that says why.
var malformed = []struct {
	name, method, path, body, ctype string
	status                          int
	want                            string // in the body
}{
	{"empty body", "POST", "/v1/chat/completions", ``, "", 400, "empty"},
	{"not JSON", "POST", "/v1/chat/completions", `hello`, "", 400, "not valid JSON"},
	{"a JSON array", "POST", "/v1/chat/completions", `[]`, "", 400, "JSON object"},
	{"truncated JSON", "POST", "/v1/chat/completions", `{"messages":[`, "", 400, "not valid JSON"},
	{"two JSON values", "POST", "/v1/chat/completions", `{} {}`, "", 400, "more than one"},
	{"invalid UTF-8", "POST", "/v1/chat/completions", "{\"messages\":[{\"role\":\"user\",\"content\":\"\xff\xfe\"}]}", "", 400, "UTF-8"},
	{"no messages", "POST", "/v1/chat/completions", `{"model":"stories260K"}`, "", 400, `"param":"messages"`},
	{"empty messages", "POST", "/v1/chat/completions", `{"messages":[]}`, "", 400, "at least one message"},
	{"messages not an array", "POST", "/v1/chat/completions", `{"messages":"hi"}`, "", 400, `"param":"messages"`},
	{"content a number", "POST", "/v1/chat/completions", `{"messages":[{"role":"user","content":5}]}`, "", 400, "content must be"},
	{"no content", "POST", "/v1/chat/completions", `{"messages":[{"role":"user"}]}`, "", 400, "has no content"},
	{"unknown role", "POST", "/v1/chat/completions", `{"messages":[{"role":"robot","content":"x"}]}`, "", 400, `role \"robot\"`},
	{"no role", "POST", "/v1/chat/completions", `{"messages":[{"content":"x"}]}`, "", 400, "has no role"},
	{"a tool message", "POST", "/v1/chat/completions", `{"messages":[{"role":"tool","content":"x"}]}`, "", 400, "runs no tools"},
	{"an image part", "POST", "/v1/chat/completions", `{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"x"}}]}]}`, "", 400, "only text"},
	{"max_tokens a string", "POST", "/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}],"max_tokens":"8"}`, "", 400, `"param":"max_tokens"`},
	{"max_tokens 0", "POST", "/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}],"max_tokens":0}`, "", 400, "at least 1"},
	{"max_tokens beyond the cap", "POST", "/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}],"max_tokens":1000000000}`, "", 400, "more than this server allows"},
	{"max_completion_tokens negative", "POST", "/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}],"max_completion_tokens":-3}`, "", 400, "max_completion_tokens"},
	{"temperature 5", "POST", "/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}],"temperature":5}`, "", 400, "temperature must be between"},
	{"top_p negative", "POST", "/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}],"top_p":-1}`, "", 400, "top_p"},
	{"presence_penalty 3", "POST", "/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}],"presence_penalty":3}`, "", 400, "presence_penalty"},
	{"top_k negative", "POST", "/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}],"top_k":-2}`, "", 400, "top_k"},
	{"seed below -1", "POST", "/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}],"seed":-5}`, "", 400, "seed"},
	{"n 2", "POST", "/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}],"n":2}`, "", 400, "n must be 1"},
	{"stop a number", "POST", "/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}],"stop":7}`, "", 400, "stop must be"},
	{"too many stops", "POST", "/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}],"stop":["a","b","c","d","e","f","g","h","i","j","k","l","m","n","o","p","q"]}`, "", 400, "too many stop"},
	{"an empty stop", "POST", "/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}],"stop":[""]}`, "", 400, "empty"},
	{"stream a string", "POST", "/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}],"stream":"yes"}`, "", 400, `"param":"stream"`},
	{"stream_options without stream", "POST", "/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}],"stream_options":{"include_usage":true}}`, "", 400, "stream_options"},
	{"top_logprobs 30", "POST", "/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}],"logprobs":true,"top_logprobs":30}`, "", 400, "top_logprobs"},
	{"top_logprobs without logprobs", "POST", "/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}],"top_logprobs":3}`, "", 400, "needs logprobs"},
	{"tools", "POST", "/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"f"}}]}`, "", 400, "tools are not supported"},
	{"response_format json_schema", "POST", "/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}],"response_format":{"type":"json_schema"}}`, "", 400, "response_format"},
	{"logit_bias", "POST", "/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}],"logit_bias":{"5":10}}`, "", 400, "logit_bias"},
	{"a conversation that is not an id", "POST", "/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}],"conversation":"abc"}`, "", 400, "conversation"},
	{"too many messages", "POST", "/v1/chat/completions", `{"messages":[` + strings.Repeat(`{"role":"user","content":"x"},`, 8) + `{"role":"user","content":"x"}]}`, "", 400, "too many messages"},
	{"an unknown model", "POST", "/v1/chat/completions", `{"model":"gpt-4o","messages":[{"role":"user","content":"x"}]}`, "", 404, "model_not_found"},
	{"a prompt longer than the context", "POST", "/v1/completions", `{"prompt":"` + strings.Repeat("Once upon a time ", 700) + `","max_tokens":4}`, "", 400, "context_length_exceeded"},
	{"a prompt of token ids", "POST", "/v1/completions", `{"prompt":[1,2,3]}`, "", 400, "token ids are not supported"},
	{"two prompts", "POST", "/v1/completions", `{"prompt":["a","b"]}`, "", 400, "one string"},
	{"no prompt", "POST", "/v1/completions", `{"max_tokens":3}`, "", 400, "prompt is required"},
	{"echo", "POST", "/v1/completions", `{"prompt":"a","echo":true}`, "", 400, "echo"},
	{"completion logprobs 9", "POST", "/v1/completions", `{"prompt":"a","logprobs":9}`, "", 400, "logprobs"},
	{"a body too large", "POST", "/v1/chat/completions", `{"messages":[{"role":"user","content":"` + strings.Repeat("x", 300<<10) + `"}]}`, "", 413, "larger than"},
	{"not JSON's content type", "POST", "/v1/chat/completions", `{"messages":[{"role":"user","content":"x"}]}`, "text/plain", 415, "Content-Type"},
	{"GET a POST endpoint", "GET", "/v1/chat/completions", ``, "", 405, "takes POST"},
	{"an unknown endpoint", "POST", "/v1/embeddings", `{}`, "", 404, "no such endpoint"},
	{"an unknown model's card", "GET", "/v1/models/nope", ``, "", 404, "model_not_found"},
}

// TestMalformedRequests: every kind of malformed request gets its 4xx, in
// OpenAI's error shape, with a message that says what is wrong; the
// server keeps serving after each, and the history loses nothing.
func TestMalformedRequests(t *testing.T) {
	if len(malformed) < 20 {
		t.Fatalf("%d kinds of malformed request; the table should hold at least 20", len(malformed))
	}
	f := newFixture(t, fixtureOpt{cfg: Config{MaxMessages: 8, MaxBody: 256 << 10}})
	conv, before := storedHistory(t, f)
	for _, c := range malformed {
		req, err := http.NewRequest(c.method, f.base+c.path, strings.NewReader(c.body))
		if err != nil {
			t.Fatal(err)
		}
		ct := c.ctype
		if ct == "" && c.method == "POST" {
			ct = "application/json"
		}
		if ct != "" {
			req.Header.Set("Content-Type", ct)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		body := readAll(t, resp)
		if resp.StatusCode != c.status || !strings.Contains(body, c.want) || !strings.Contains(body, `"error":{"message":`) {
			t.Errorf("%s: %d %s; want %d with %q", c.name, resp.StatusCode, body, c.status, c.want)
		}
		// The server goes on serving.
		if status, _, _ := f.do(http.MethodGet, "/v1/models", ""); status != 200 {
			t.Fatalf("after %s the server answers %d", c.name, status)
		}
	}
	var ok openai.ChatChunk
	f.post("/v1/chat/completions", `{"messages":[{"role":"user","content":"Once upon a time"}],"max_tokens":4}`, &ok)
	checkHistory(t, f, conv, before)
}

// TestFuzzedRequests: a few hundred requests made by mutating good and
// bad ones each get a 2xx or a 4xx, never a 5xx or a dropped
// connection; the server serves on and the history is intact.
func TestFuzzedRequests(t *testing.T) {
	f := newFixture(t, fixtureOpt{cfg: Config{MaxTokens: 16}})
	conv, before := storedHistory(t, f)
	rng := rand.New(rand.NewPCG(1, 2))
	seeds := []string{
		`{"messages":[{"role":"user","content":"Once upon a time"}],"max_tokens":4,"temperature":0.5,"stop":["."],"stream":true}`,
		`{"prompt":"Lily","max_tokens":3,"logprobs":2,"seed":3}`,
		`{"messages":[{"role":"system","content":"x"},{"role":"user","content":[{"type":"text","text":"hi"}]}],"max_completion_tokens":2,"top_p":0.9,"top_k":5}`,
	}
	n := 300
	if testing.Short() {
		n = 60
	}
	for i := range n {
		body := []byte(seeds[i%len(seeds)])
		for range 1 + rng.IntN(4) {
			body = mutate(rng, body)
		}
		path := "/v1/chat/completions"
		if strings.Contains(string(body), `"prompt"`) {
			path = "/v1/completions"
		}
		resp, err := http.Post(f.base+path, "application/json", strings.NewReader(string(body)))
		if err != nil {
			t.Fatalf("request %d %q: %v", i, body, err)
		}
		out := readAll(t, resp)
		if resp.StatusCode >= 500 || resp.StatusCode != 200 && !strings.Contains(out, `"error"`) {
			t.Fatalf("request %d %q: %d %s", i, body, resp.StatusCode, out)
		}
	}
	f.waitIdle()
	checkHistory(t, f, conv, before)
}

// mutate changes body a little: a byte flipped, cut, doubled, or a value
// swapped for one of another type.
func mutate(rng *rand.Rand, body []byte) []byte {
	if len(body) == 0 {
		return []byte(`{`)
	}
	i := rng.IntN(len(body))
	switch rng.IntN(6) {
	case 0:
		b := append([]byte(nil), body...)
		b[i] ^= byte(1 << rng.IntN(8))
		return b
	case 1:
		return body[:i]
	case 2:
		return append(append(append([]byte(nil), body[:i]...), body[i:]...), body[i:]...)
	case 3:
		vals := []string{`null`, `-1`, `1e309`, `"x"`, `[]`, `{}`, `true`, `99999999999`, `"\u0000"`}
		return []byte(strings.Replace(string(body), ":", ":"+vals[rng.IntN(len(vals))]+",\"_\":", 1+rng.IntN(2)))
	case 4:
		return append(append([]byte(nil), body[:i]...), body[min(len(body), i+1+rng.IntN(8)):]...)
	}
	return []byte(strings.Replace(string(body), `"user"`, `"`+[]string{"assistant", "system", "tool", "", "USER"}[rng.IntN(5)]+`"`, 1))
}

// storedHistory stores a conversation with an answer, as the window
// would, and returns it with its messages.
func storedHistory(t *testing.T, f *fixture) (int64, []session.Message) {
	t.Helper()
	ans, err := f.m.Answer(context.Background(), session.Request{Messages: []session.RequestMessage{{Role: "user", Content: "Once upon a time"}},
		Settings: DefaultSampling(), Store: true})
	if err != nil {
		t.Fatal(err)
	}
	var conv int64
	for ev := range ans.Events {
		if d, ok := ev.(session.AnswerDone); ok {
			conv = d.Usage.Conversation
		}
	}
	msgs, err := f.m.Messages(conv)
	if err != nil || len(msgs) != 2 {
		t.Fatalf("the stored conversation: %v %v", msgs, err)
	}
	return conv, msgs
}

func checkHistory(t *testing.T, f *fixture, conv int64, before []session.Message) {
	t.Helper()
	list, err := f.m.ListConversations()
	if err != nil || len(list) != 1 || list[0].ID != conv {
		t.Fatalf("conversations after the bad requests: %+v %v", list, err)
	}
	after, err := f.m.Messages(conv)
	if err != nil || len(after) != len(before) {
		t.Fatalf("messages after: %+v %v", after, err)
	}
	for i := range before {
		if after[i].Content != before[i].Content || after[i].ID != before[i].ID {
			t.Fatalf("message %d changed: %+v, was %+v", i, after[i], before[i])
		}
	}
}

func readAll(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 32<<10)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return b.String()
}

// FuzzDecodeChat: the chat decoder never panics; it refuses with a 4xx,
// or gives a request the session accepts.
func FuzzDecodeChat(f *testing.F) {
	for _, c := range malformed {
		if strings.Contains(c.path, "chat") {
			f.Add([]byte(c.body))
		}
	}
	f.Add([]byte(`{"messages":[{"role":"user","content":"hi"}],"max_tokens":4,"temperature":0,"stream":true,"stream_options":{"include_usage":true},"stop":["a"],"seed":1,"logprobs":true,"top_logprobs":2,"conversation":"3"}`))
	lim := limits{messages: 64, maxTokens: 1024, defaults: DefaultSampling()}
	f.Fuzz(func(t *testing.T, body []byte) {
		c, e := decodeChat(body, lim)
		checkDecoded(t, c, e)
		if e == nil && len(c.req.Messages) == 0 {
			t.Fatalf("a chat without messages was accepted: %q", body)
		}
	})
}

// FuzzDecodeCompletion: likewise for completions.
func FuzzDecodeCompletion(f *testing.F) {
	for _, c := range malformed {
		if strings.HasSuffix(c.path, "/completions") && !strings.Contains(c.path, "chat") {
			f.Add([]byte(c.body))
		}
	}
	f.Add([]byte(`{"prompt":["hi"],"max_tokens":4,"logprobs":3,"stop":"x","best_of":1}`))
	lim := limits{messages: 64, maxTokens: 1024, defaults: DefaultSampling()}
	f.Fuzz(func(t *testing.T, body []byte) {
		c, e := decodeCompletion(body, lim)
		checkDecoded(t, c, e)
		if e == nil && c.req.Prompt == "" {
			t.Fatalf("a completion without a prompt was accepted: %q", body)
		}
	})
}

func checkDecoded(t *testing.T, c call, e *apiError) {
	t.Helper()
	if e != nil {
		if e.Status < 400 || e.Status >= 500 || e.Message == "" {
			t.Fatalf("refused with %d %q", e.Status, e.Message)
		}
		return
	}
	set := c.req.Settings
	if set.MaxTokens < 0 || set.MaxTokens > 1024 || set.TopP <= 0 || set.TopP > 1 || set.Temperature < 0 || len(set.Stop) > maxStops {
		t.Fatalf("accepted settings out of range: %+v", set)
	}
	if c.req.TopLogprobs < 0 || c.req.TopLogprobs > 20 {
		t.Fatalf("top logprobs %d", c.req.TopLogprobs)
	}
}
