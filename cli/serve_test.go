package cli

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/churon/churon/app/paths"
	"github.com/churon/churon/internal/testdata"
	"github.com/churon/churon/internal/testutil"
)

// TestServe: `churon serve` loads the model, prints its base URL, answers
// an OpenAI client's request (with a log line, --log), and stops cleanly
// on an interrupt; beyond loopback it wants a key.
func TestServe(t *testing.T) {
	t.Setenv(paths.EnvHome, t.TempDir())
	if _, stderr, code := run(t, "serve", "-m", testdata.Stories260K(t), "--addr", "0.0.0.0:0"); code == 0 || !strings.Contains(stderr, "API key") {
		t.Fatalf("every interface without a key: exit %d %s", code, stderr)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var out, errOut testutil.Buffer
	done := make(chan int, 1)
	go func() {
		done <- Run(ctx, []string{"serve", "-m", testdata.Stories260K(t), "--addr", "127.0.0.1:0", "--log"}, &out, &errOut)
	}()
	var base string
	for deadline := time.Now().Add(time.Minute); base == "" && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if s := strings.TrimSpace(out.String()); strings.HasPrefix(s, "http://") {
			base = s
		}
	}
	if base == "" {
		cancel()
		t.Fatalf("no URL printed; stderr %s", errOut.String())
	}
	resp, err := http.Post(base+"/chat/completions", "application/json",
		strings.NewReader(`{"messages":[{"role":"user","content":"Once upon a time"}],"max_tokens":5,"temperature":0}`))
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Choices []struct {
			Message struct{ Content string } `json:"message"`
		} `json:"choices"`
		Usage struct {
			CompletionTokens int `json:"completion_tokens"`
		} `json:"usage"`
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err := json.Unmarshal(body, &c); err != nil || resp.StatusCode != 200 || c.Usage.CompletionTokens != 5 || c.Choices[0].Message.Content == "" {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("exit %d after an interrupt: %s", code, errOut.String())
		}
	case <-time.After(time.Minute):
		t.Fatal("serve did not stop")
	}
	if log := errOut.String(); !strings.Contains(log, "/v1/chat/completions 200 model=stories260K") || !strings.Contains(log, "serving stories260K at "+base) {
		t.Fatalf("stderr %s", log)
	}
}
