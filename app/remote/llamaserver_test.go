package remote

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	apicompare "github.com/churon/churon/app/api/compare"
	"github.com/churon/churon/app/api/openai"
	"github.com/churon/churon/app/api/session"
	"github.com/churon/churon/app/compare"
)

// TestLlamaServer runs against a real llama-server (tools/llama-server/run.sh
// builds and starts one serving stories260K): discovery, the connection
// test, a conversation, a comparison of our engine with llama.cpp's on
// the same file (the KLD estimate from its top_logprobs) and a wrong key.
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

	// Churon's engine against llama.cpp's on the same file: the KLD
	// estimate from llama-server's top_logprobs, and top-1 agreement.
	if file := os.Getenv("CHURON_LLAMA_SERVER_MODEL"); file != "" {
		res, err := compare.RunCross(context.Background(), apicompare.CrossOptions{Models: []string{file, path}, Remotes: c.conns,
			Prompt: "Once upon a time", MaxTokens: 64, TopK: 5, Threads: 1})
		if err != nil {
			t.Fatal(err)
		}
		local := res.Columns[0]
		if local.Error != "" || local.KLD == nil {
			t.Fatalf("compare: %+v", local)
		}
		t.Logf("compare against llama-server: KLD %.5f (est., top-5), top-1 %.1f%% over %d places", *local.KLD, 100**local.Top1, local.Positions)
		if *local.Top1 < 0.9 || *local.KLD > 0.05 {
			t.Errorf("the same F32 file on two engines: KLD %g, top-1 %g", *local.KLD, *local.Top1)
		}
	}

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
