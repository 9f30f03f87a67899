// Package remotetest is test support for remote engines: Churon's own
// OpenAI-compatible server (`churon serve`, in-process, over the built-in
// demo model) on a loopback port, and servers that fail in the ways real
// ones do. Nothing here reaches beyond 127.0.0.1.
package remotetest

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	apiserve "github.com/churon/churon/app/api/serve"
	api "github.com/churon/churon/app/api/session"
	"github.com/churon/churon/app/session"
	"github.com/churon/churon/app/store"
	"github.com/churon/churon/serve"
)

// Key is the API key the servers here want when asked to.
const Key = "sk-remotetest-4f9a2c7e1b8d3a6f"

// Served is a running `churon serve`.
type Served struct {
	Base  string // http://127.0.0.1:PORT
	Model string // the model id it serves
}

// Serve starts `churon serve` in-process over the demo model, with key
// ("" for none), on a free loopback port; it stops with the test.
func Serve(t testing.TB, key string) Served {
	t.Helper()
	return ServeModel(t, api.DemoPath, key)
}

// ServeModel is Serve over the model at path.
func ServeModel(t testing.TB, path, key string) Served {
	t.Helper()
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "server.db"))
	if err != nil {
		t.Fatal(err)
	}
	m := session.New(st, session.Options{Threads: 1})
	loaded := make(chan error, 1)
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		for ev := range m.Events() {
			switch e := ev.(type) {
			case api.ModelLoaded:
				select {
				case loaded <- nil:
				default:
				}
			case api.Error:
				select {
				case loaded <- e.Err:
				default:
				}
			}
		}
	}()
	if err := m.LoadModel(path); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-loaded:
		if err != nil {
			t.Fatalf("the server's model: %v", err)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("the server's model did not load")
	}
	srv := serve.New(serve.Options{Session: m})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.StartOn(ln, apiserve.Config{Addr: ln.Addr().String(), APIKey: key}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		srv.Stop()
		m.Close()
		<-drained
		st.Close()
	})
	s := Served{Base: "http://" + ln.Addr().String()}
	req, _ := http.NewRequest(http.MethodGet, s.Base+"/v1/models", nil)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil || len(list.Data) != 1 {
		t.Fatalf("the server's models: %v %v", list, err)
	}
	s.Model = list.Data[0].ID
	return s
}

// Fault is a server that fails one way.
type Fault struct {
	Name string
	// Handler answers every request; Partial is what it streams before
	// failing ("" for none).
	Handler http.HandlerFunc
	Partial string
}

// Chunk is one SSE event of streamed text, as llama-server writes it.
func Chunk(text string) string {
	b, _ := json.Marshal(map[string]any{"object": "chat.completion.chunk",
		"choices": []any{map[string]any{"index": 0, "delta": map[string]string{"content": text}, "finish_reason": nil}}})
	return "data: " + string(b) + "\n\n"
}

// models answers GET /v1/models with one model, "m".
func models(w http.ResponseWriter, r *http.Request) bool {
	if r.Method != http.MethodGet {
		return false
	}
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, `{"object":"list","data":[{"id":"m","object":"model"}]}`)
	return true
}

func status(code int, header, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if models(w, r) {
			return
		}
		if header != "" {
			w.Header().Set("Retry-After", header)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		io.WriteString(w, body)
	}
}

func stream(parts ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if models(w, r) {
			return
		}
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		for _, p := range parts {
			if p == "HOLD" { // nothing more until the client leaves
				<-r.Context().Done()
				return
			}
			if p == "CUT" {
				if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
					conn.Close()
				}
				return
			}
			io.WriteString(w, p)
			w.(http.Flusher).Flush()
		}
	}
}

// Faults are the ways a server fails mid-conversation, each with what it
// streams first. The 401 echoes the key it was sent, as OpenAI's does.
func Faults() []Fault {
	return []Fault{
		{Name: "401", Handler: func(w http.ResponseWriter, r *http.Request) {
			key := r.Header.Get("Authorization")
			status(401, "", `{"error":{"message":"Incorrect API key provided: `+key+`","type":"invalid_request_error"}}`)(w, r)
		}},
		{Name: "404 model", Handler: status(404, "", `{"error":{"message":"model \"m\" not found, try pulling it first","type":"api_error"}}`)},
		{Name: "429", Handler: status(429, "30", `{"error":{"message":"Rate limit reached"}}`)},
		{Name: "500", Handler: status(500, "", `{"error":{"code":500,"message":"CUDA error: out of memory","type":"server_error"}}`)},
		{Name: "cut stream", Handler: stream(Chunk("Once"), Chunk(" upon"), "CUT"), Partial: "Once upon"},
		{Name: "stall", Handler: stream(Chunk("Once"), "HOLD"), Partial: "Once"},
		{Name: "bad JSON", Handler: stream(Chunk("Once"), "data: {\"choices\":[\n\n"), Partial: "Once"},
		{Name: "error event", Handler: stream(Chunk("Once"), `data: {"error":{"code":500,"message":"the context is full","type":"server_error"}}`+"\n\n"), Partial: "Once"},
		{Name: "slow first byte", Handler: func(w http.ResponseWriter, r *http.Request) {
			if models(w, r) {
				return
			}
			io.Copy(io.Discard, r.Body)
			<-r.Context().Done()
		}},
	}
}
