package openai

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const testKey = "sk-churon-test-0123456789abcdef"

func TestNormalizeBaseURL(t *testing.T) {
	tests := []struct{ in, want string }{
		{"http://127.0.0.1:8080", "http://127.0.0.1:8080/v1"},
		{"http://127.0.0.1:8080/", "http://127.0.0.1:8080/v1"},
		{"http://127.0.0.1:8080/v1", "http://127.0.0.1:8080/v1"},
		{"http://127.0.0.1:8080/v1/", "http://127.0.0.1:8080/v1"},
		{"http://127.0.0.1:8080/v1/v1", "http://127.0.0.1:8080/v1/v1"}, // a path someone chose is kept
		{"http://127.0.0.1:8080/v1/chat/completions", "http://127.0.0.1:8080/v1"},
		{"http://127.0.0.1:8080/v1/models", "http://127.0.0.1:8080/v1"},
		{"localhost:11434", "http://localhost:11434/v1"},
		{"  https://api.example.com/openai/v1?x=1#f ", "https://api.example.com/openai/v1"},
		{"https://api.example.com/openai", "https://api.example.com/openai/v1"},
	}
	for _, tt := range tests {
		got, err := NormalizeBaseURL(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("NormalizeBaseURL(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
		again, err := NormalizeBaseURL(got)
		if err != nil || again != got {
			t.Errorf("NormalizeBaseURL(%q) again = %q, %v: not idempotent", got, again, err)
		}
	}
	for _, bad := range []string{"", "ftp://x", "http://", "http://user:pw@host"} {
		if _, err := NormalizeBaseURL(bad); !errors.Is(err, ErrBadURL) {
			t.Errorf("NormalizeBaseURL(%q): %v, want ErrBadURL", bad, err)
		}
	}
}

func fixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "streams", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// replay is a handler that sends body as a stream (200, text/event-stream).
func replay(body []byte) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		// Event by event, flushed, as the servers write them.
		for _, part := range strings.SplitAfter(string(body), "\n\n") {
			io.WriteString(w, part)
			w.(http.Flusher).Flush()
		}
	}
}

func status(code int, header, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if header != "" {
			k, v, _ := strings.Cut(header, ": ")
			w.Header().Set(k, v)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		io.WriteString(w, body)
	}
}

// collected is what a stream gave until it ended.
type collected struct {
	text, reasoning string
	logprobs        int
	usage           *Usage
	finish          string
	err             error
}

func collect(t *testing.T, c *Client, model string) collected {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	st, err := c.ChatStream(ctx, ChatRequest{Model: model, Messages: []Message{{Role: "user", Content: "hi"}}})
	if err != nil {
		return collected{err: err}
	}
	defer st.Close()
	var out collected
	for {
		ch, err := st.Next()
		if err != nil {
			if err != io.EOF {
				out.err = err
			}
			break
		}
		out.text += ch.Text()
		out.reasoning += ch.ReasoningText()
		out.logprobs += len(ch.TokenLogprobs())
	}
	out.usage, out.finish = st.Usage(), st.FinishReason()
	return out
}

func newClient(t *testing.T, base string, cfg Config) *Client {
	t.Helper()
	cfg.BaseURL = base
	if cfg.APIKey == "" {
		cfg.APIKey = testKey
	}
	c, err := NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestRecordedStreams: llama-server's, vLLM's and Ollama's streams, as
// each writes them, give the same answer.
func TestRecordedStreams(t *testing.T) {
	for _, tt := range []struct {
		file     string
		logprobs int
	}{{"llama-server.sse", 0}, {"vllm.sse", 1}, {"ollama.sse", 0}} {
		t.Run(tt.file, func(t *testing.T) {
			srv := httptest.NewServer(replay(fixture(t, tt.file)))
			defer srv.Close()
			got := collect(t, newClient(t, srv.URL, Config{}), "m")
			if got.err != nil {
				t.Fatal(got.err)
			}
			if got.text != "Once upon a time" || got.reasoning != "Think" || got.finish != "stop" {
				t.Errorf("text %q, reasoning %q, finish %q", got.text, got.reasoning, got.finish)
			}
			if got.usage == nil || got.usage.PromptTokens != 12 || got.usage.CompletionTokens != 4 {
				t.Errorf("usage %+v, want 12 prompt and 4 completion tokens", got.usage)
			}
			if got.logprobs != tt.logprobs {
				t.Errorf("%d logprobs, want %d", got.logprobs, tt.logprobs)
			}
		})
	}
}

// TestFaults: every way a server fails is an *Error of the right kind
// whose line says what to do, what streamed before is still delivered,
// and the API key appears nowhere.
func TestFaults(t *testing.T) {
	hold := func(first string) http.HandlerFunc { // sends first, then nothing until the client leaves
		return func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body) // so that the server watches the connection
			if first != "" {
				w.Header().Set("Content-Type", "text/event-stream")
				io.WriteString(w, first)
				w.(http.Flusher).Flush()
			}
			<-r.Context().Done()
		}
	}
	once := "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Once\"},\"finish_reason\":null}]}\n\n"
	tests := []struct {
		name    string
		h       http.HandlerFunc
		cfg     Config
		kind    error
		text    string // streamed before the failure
		says    string // in the error's line
		retry   time.Duration
		noModel bool
	}{
		{name: "401 (llama-server)", h: status(401, "", string(fixture(t, "llama-server-401.json"))), kind: ErrUnauthorized, says: "Invalid API Key"},
		{name: "401 echoing the key", h: status(401, "", `{"error":{"message":"Incorrect API key provided: `+testKey+`. You can find your API key at …","type":"invalid_request_error"}}`), kind: ErrUnauthorized, says: "check the API key"},
		{name: "403", h: status(403, "", `{"error":{"message":"forbidden"}}`), kind: ErrUnauthorized},
		{name: "404 model (Ollama)", h: status(404, "", string(fixture(t, "ollama-404.json"))), kind: ErrNotFound, says: `does not serve the model "m"`},
		{name: "404 model (vLLM)", h: status(404, "", string(fixture(t, "vllm-404.json"))), kind: ErrNotFound, says: "does not exist"},
		{name: "400 model not found", h: status(400, "", `{"error":{"message":"model 'm' not found"}}`), kind: ErrNotFound},
		{name: "429 Retry-After", h: status(429, "Retry-After: 7", `{"error":{"message":"slow down"}}`), kind: ErrRateLimited, retry: 7 * time.Second, says: "try again in 7s"},
		{name: "500", h: status(500, "", `internal error`), kind: ErrServer, says: "internal error"},
		{name: "503 loading (llama-server)", h: status(503, "", string(fixture(t, "llama-server-503.json"))), kind: ErrServer, says: "Loading model"},
		{name: "502 html page", h: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(502)
			io.WriteString(w, "<html><body>Bad Gateway</body></html>")
		}, kind: ErrServer},
		{name: "error inside the stream (llama-server)", h: replay(fixture(t, "llama-server-error.sse")), kind: ErrServer, text: "Once", says: "the context is full"},
		{name: "error inside the stream (vLLM)", h: replay(fixture(t, "vllm-error.sse")), kind: ErrServer, text: "Once", says: "Engine loop has died"},
		{name: "stream cut", h: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, once+"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\" up")
			w.(http.Flusher).Flush()
			conn, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				conn.Close()
			}
		}, kind: ErrStreamCut, text: "Once", says: "what arrived is kept"},
		{name: "stream ends without [DONE] or a finish", h: replay([]byte(once)), kind: ErrStreamCut, text: "Once"},
		{name: "stall mid-stream", h: hold(once), cfg: Config{Stall: 300 * time.Millisecond}, kind: ErrStalled, text: "Once", says: "stopped sending"},
		{name: "slow first byte", h: hold(""), cfg: Config{FirstByte: 300 * time.Millisecond}, kind: ErrTimeout, says: "did not answer in time"},
		{name: "bad JSON", h: replay([]byte(once + "data: {\"choices\":[{\"delta\":\n\n")), kind: ErrBadResponse, text: "Once"},
		{name: "not an API (404 page)", h: func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) }, kind: ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(tt.h)
			defer srv.Close()
			got := collect(t, newClient(t, srv.URL, tt.cfg), "m")
			checkFault(t, got, tt.kind, tt.text, tt.says)
			var e *Error
			if errors.As(got.err, &e) && e.RetryAfter != tt.retry {
				t.Errorf("RetryAfter %v, want %v", e.RetryAfter, tt.retry)
			}
		})
	}

	t.Run("refused", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		checkFault(t, collect(t, newClient(t, "http://"+addr, Config{}), "m"), ErrUnreachable, "", "check that the server is running")
	})
	t.Run("TLS, self-signed", func(t *testing.T) {
		srv := httptest.NewTLSServer(replay(fixture(t, "ollama.sse")))
		defer srv.Close()
		checkFault(t, collect(t, newClient(t, srv.URL, Config{}), "m"), ErrTLS, "", "not trusted")
		// Trusted by the person, it works.
		pool := x509.NewCertPool()
		pool.AddCert(srv.Certificate())
		got := collect(t, newClient(t, srv.URL, Config{RootCAs: pool}), "m")
		if got.err != nil || got.text != "Once upon a time" {
			t.Fatalf("with the certificate trusted: %q, %v", got.text, got.err)
		}
	})
	t.Run("http to a TLS server", func(t *testing.T) {
		srv := httptest.NewServer(replay(fixture(t, "ollama.sse")))
		defer srv.Close()
		https := strings.Replace(srv.URL, "http://", "https://", 1)
		checkFault(t, collect(t, newClient(t, https, Config{}), "m"), ErrTLS, "", "")
	})
}

func checkFault(t *testing.T, got collected, kind error, text, says string) {
	t.Helper()
	if !errors.Is(got.err, kind) {
		t.Fatalf("error %v, want %v", got.err, kind)
	}
	var e *Error
	if !errors.As(got.err, &e) {
		t.Fatalf("error %T, want *Error", got.err)
	}
	line := got.err.Error()
	if strings.Contains(line, "\n") || !strings.Contains(line, ": ") {
		t.Errorf("error %q: want one line saying what happened: what to do", line)
	}
	if says != "" && !strings.Contains(line, says) {
		t.Errorf("error %q does not say %q", line, says)
	}
	if got.text != text {
		t.Errorf("streamed %q before the error, want %q", got.text, text)
	}
	for _, part := range []string{testKey, testKey[len(testKey)-8:]} {
		if strings.Contains(line, part) || strings.Contains(fmt.Sprintf("%+v %#v", got.err, e.Message), part) {
			t.Errorf("the error shows the API key: %q", line)
		}
	}
}

// TestKeySent: the key goes in the Authorization header, and nowhere a
// server logs by default (the URL).
func TestKeySent(t *testing.T) {
	var auth, uri string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth, uri = r.Header.Get("Authorization"), r.RequestURI
		status(200, "", `{"object":"list","data":[{"id":"a","object":"model"},{"id":"b","object":"model"}]}`)(w, r)
	}))
	defer srv.Close()
	ms, err := newClient(t, srv.URL, Config{}).Models(context.Background())
	if err != nil || len(ms) != 2 || ms[1].ID != "b" {
		t.Fatalf("models %v, %v", ms, err)
	}
	if auth != "Bearer "+testKey || strings.Contains(uri, testKey) || uri != "/v1/models" {
		t.Fatalf("Authorization %q, URI %q", auth, uri)
	}
}

// TestStopCancels: closing a stream ends the request on the server.
func TestStopCancels(t *testing.T) {
	gone := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
		close(gone)
	}))
	defer srv.Close()
	st, err := newClient(t, srv.URL, Config{}).ChatStream(context.Background(), ChatRequest{Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	if ch, err := st.Next(); err != nil || ch.Text() != "a" {
		t.Fatalf("first chunk %q, %v", ch.Text(), err)
	}
	st.Close()
	select {
	case <-gone:
	case <-time.After(time.Minute):
		t.Fatal("the server's request went on after Close")
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 12, 3, 6, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		v    string
		want time.Duration
	}{{"", 0}, {"12", 12 * time.Second}, {"-1", 0}, {"soon", 0}, {now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second}} {
		if got := retryAfter(tt.v, now); got != tt.want {
			t.Errorf("retryAfter(%q) = %v, want %v", tt.v, got, tt.want)
		}
	}
}
