package httpfile

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"testing"
)

func TestRedact(t *testing.T) {
	cases := []struct{ in, want string }{
		{"https://huggingface.co/o/r/resolve/main/m.gguf", "https://huggingface.co/o/r/resolve/main/m.gguf"},
		{"https://cdn.example.com/m.gguf?X-Amz-Signature=secret&x=1", "https://cdn.example.com/m.gguf"},
		{"https://user:pass@example.com/m.gguf#frag", "https://example.com/m.gguf"},
		{"http://[::1", "(invalid URL)"},
	}
	for _, c := range cases {
		if got := Redact(c.in); got != c.want {
			t.Errorf("Redact(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestNewGet(t *testing.T) {
	cases := []struct {
		name      string
		authorize func(*http.Request)
		wantAuth  string
	}{
		{"anonymous", nil, ""},
		{"token", func(r *http.Request) { r.Header.Set("Authorization", "Bearer t") }, "Bearer t"},
	}
	for _, c := range cases {
		req, err := NewGet(context.Background(), "https://example.com/m.gguf", c.authorize)
		if err != nil {
			t.Fatal(err)
		}
		h := req.Header
		if req.Method != http.MethodGet || h.Get("Accept-Encoding") != "identity" || h.Get("User-Agent") != UserAgent || h.Get("Authorization") != c.wantAuth {
			t.Errorf("%s: %s %v", c.name, req.Method, h)
		}
	}
	if _, err := NewGet(context.Background(), "http://[::1", nil); err == nil {
		t.Error("a bad URL made a request")
	}
}

func TestCause(t *testing.T) {
	refused := errors.New("connection refused")
	cases := []struct {
		name    string
		in, out error
	}{
		{"url error", &url.Error{Op: "Get", URL: "https://x/?sig=secret", Err: refused}, refused},
		{"wrapped url error", fmt.Errorf("attempt 2: %w", &url.Error{Op: "Get", URL: "https://x/", Err: refused}), refused},
		{"other", refused, refused},
		{"nil", nil, nil},
	}
	for _, c := range cases {
		if got := Cause(c.in); got != c.out {
			t.Errorf("%s: Cause = %v, want %v", c.name, got, c.out)
		}
	}
}
