package remote

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/churon/churon/app/api/openai"
	"github.com/churon/churon/app/session"
)

// TestLlamaServer runs against a real llama-server (tools/llama-server/run.sh
// builds and starts one serving stories260K): discovery, the connection
// test, a conversation, a wrong key and a model it does not serve.
func TestLlamaServer(t *testing.T) {
	base, key := os.Getenv("CHURON_LLAMA_SERVER"), os.Getenv("CHURON_LLAMA_SERVER_KEY")
	if base == "" {
		t.Skip("no llama-server: tools/llama-server/run.sh builds one and runs this test against it (CHURON_LLAMA_SERVER=URL)")
	}
	c := newClient(t)
	if _, err := c.conns.Add(Connection{Name: "llama", BaseURL: base}, key, false); err != nil {
		t.Fatal(err)
	}
	ids, err := c.conns.Refresh(context.Background(), "llama")
	if err != nil || len(ids) == 0 {
		t.Fatalf("models %v, %v", ids, err)
	}
	t.Logf("llama-server serves %v", ids)
	rep, err := c.conns.Test(context.Background(), "llama", "")
	if err != nil || !rep.Streaming {
		t.Fatalf("test: %+v, %v", rep, err)
	}
	t.Logf("test: %.1f ms, streaming %v, logprobs %v %s", float64(rep.Latency.Microseconds())/1000, rep.Streaming, rep.Logprobs, rep.LogprobsNote)

	path := session.RemotePath("llama", ids[0])
	c.load(path)
	conv, streamed, stats, done := c.ask("Once upon a time")
	if done.Reason == session.ReasonError {
		t.Fatalf("answer failed: %v", done.Err)
	}
	ans := c.answer(conv)
	if ans.Content == "" || ans.Content != streamed || ans.Model != path || ans.GenTokens == 0 || ans.PromptTokens == 0 {
		t.Fatalf("stored %+v (streamed %q)", ans, streamed)
	}
	t.Logf("answer: %d prompt, %d generated tokens, TTFT %v, %.1f tok/s (%s): %.60q", stats.PromptTokens, stats.GenTokens, stats.TTFT, stats.GenTPS, done.Reason, ans.Content)

	if _, err := c.conns.Add(Connection{Name: "wrong", BaseURL: base, Models: ids}, "sk-wrong-0123456789", false); err != nil {
		t.Fatal(err)
	}
	c.load(session.RemotePath("wrong", ids[0]))
	_, _, _, done = c.ask("hi")
	if !errors.Is(done.Err, openai.ErrUnauthorized) {
		t.Fatalf("a wrong key: %v", done.Err)
	}
	t.Logf("a wrong key: %v", done.Err)
	if key != "" && strings.Contains(done.Err.Error(), key) {
		t.Error("the key is in the error")
	}
	noKey(t, key, "logs", c.logs.String())
}
