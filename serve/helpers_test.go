package serve

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/churon/churon/app/api/openai"
	apiserve "github.com/churon/churon/app/api/serve"
	api "github.com/churon/churon/app/api/session"
	"github.com/churon/churon/app/kvcache"
	"github.com/churon/churon/app/session"
	"github.com/churon/churon/app/store"
	"github.com/churon/churon/internal/testdata"
	"github.com/churon/churon/internal/testutil"
	"github.com/churon/churon/models/synth"
	"github.com/churon/churon/models/synth/synthtest"
)

const waitLimit = 2 * time.Minute

// chatModel is a tiny random model with a ChatML template (written once).
func chatModel(t *testing.T) string {
	t.Helper()
	spec := synth.Tiny("qwen2")
	spec.Context = 2048 // room for a few turns of a random model's bytes
	return synthtest.Path(t, "qwen2-ctx2048", spec)
}

// fixture is a real session over a real store, with a model loaded, and
// the server on a free loopback port.
type fixture struct {
	t    *testing.T
	st   *store.Store
	m    *session.Manager
	srv  *Server
	base string // http://127.0.0.1:PORT
	cfg  Config
	log  *testutil.Buffer
}

type fixtureOpt struct {
	cfg   Config
	disk  session.DiskCache
	model string
	dbDir string // the store's folder (a restart passes the same)
	sopt  session.Options
}

func newFixture(t *testing.T, o fixtureOpt) *fixture {
	t.Helper()
	if o.dbDir == "" {
		o.dbDir = t.TempDir()
	}
	st, err := store.Open(context.Background(), filepath.Join(o.dbDir, "churon.db"))
	if err != nil {
		t.Fatal(err)
	}
	o.sopt.Threads = 1
	o.sopt.Disk = o.disk
	m := session.New(st, o.sopt)
	drained := make(chan struct{})
	events := make(chan api.Event, 1024)
	go func() {
		defer close(drained)
		for ev := range m.Events() {
			select {
			case events <- ev:
			default: // the tests read only the load's
			}
		}
	}()
	if o.model == "" {
		o.model = testdata.Stories260K(t)
	}
	if err := m.LoadModel(o.model); err != nil {
		t.Fatal(err)
	}
	for loaded := false; !loaded; {
		select {
		case ev := <-events:
			switch e := ev.(type) {
			case api.ModelLoaded:
				loaded = true
			case api.Error:
				t.Fatalf("load: %v", e.Err)
			}
		case <-time.After(waitLimit):
			t.Fatal("the model did not load")
		}
	}
	log := &testutil.Buffer{}
	srv := New(Options{Session: m, LogOutput: log})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	o.cfg.Log = true
	if err := srv.StartOn(ln, o.cfg); err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, st: st, m: m, srv: srv, base: "http://" + ln.Addr().String(), cfg: o.cfg, log: log}
	t.Cleanup(func() { f.close(); <-drained })
	return f
}

var closeMu sync.Mutex

func (f *fixture) close() {
	closeMu.Lock()
	defer closeMu.Unlock()
	if f.srv == nil {
		return
	}
	f.srv.Stop()
	f.m.Close()
	f.st.Close()
	f.srv = nil
}

// do sends a request and returns the status and the body.
func (f *fixture) do(method, path, body string, header ...string) (int, string, http.Header) {
	f.t.Helper()
	req, err := http.NewRequest(method, f.base+path, strings.NewReader(body))
	if err != nil {
		f.t.Fatal(err)
	}
	if method == http.MethodPost {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		if header[i] == "Host" {
			req.Host = header[i+1]
			continue
		}
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		f.t.Fatal(err)
	}
	return resp.StatusCode, string(b), resp.Header
}

// post sends a JSON request that must succeed and decodes its answer.
func (f *fixture) post(path, body string, v any) {
	f.t.Helper()
	status, out, _ := f.do(http.MethodPost, path, body)
	if status != http.StatusOK {
		f.t.Fatalf("POST %s %s: %d %s", path, body, status, out)
	}
	if err := json.Unmarshal([]byte(out), v); err != nil {
		f.t.Fatalf("POST %s: %v in %s", path, err, out)
	}
}

// sse reads a stream's events: the JSON of each "data:" line, and
// whether it ended with [DONE].
func sse(t *testing.T, r io.Reader) (events []string, done bool) {
	t.Helper()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			continue
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			t.Fatalf("a stream line that is not data: %q", line)
		}
		if data == "[DONE]" {
			done = true
			continue
		}
		if done {
			t.Fatalf("an event after [DONE]: %q", data)
		}
		events = append(events, data)
	}
	return events, done
}

// streamChat posts a streaming chat request and returns its chunks.
func (f *fixture) streamChat(body string) ([]openai.ChatChunk, bool) {
	f.t.Helper()
	resp, err := http.Post(f.base+"/v1/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		b, _ := io.ReadAll(resp.Body)
		f.t.Fatalf("stream: %d %s %s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	evs, done := sse(f.t, resp.Body)
	var chunks []openai.ChatChunk
	for _, e := range evs {
		var c openai.ChatChunk
		if err := json.Unmarshal([]byte(e), &c); err != nil {
			f.t.Fatalf("chunk %q: %v", e, err)
		}
		chunks = append(chunks, c)
	}
	return chunks, done
}

// waitIdle waits until the server answers nothing.
func (f *fixture) waitIdle() apiserve.Status {
	f.t.Helper()
	deadline := time.Now().Add(waitLimit)
	for time.Now().Before(deadline) {
		if st := f.srv.Status(); len(st.Active) == 0 {
			return st
		}
		time.Sleep(5 * time.Millisecond)
	}
	f.t.Fatal("requests still active")
	return apiserve.Status{}
}

func openDisk(t *testing.T, dir string) *kvcache.Store {
	t.Helper()
	d, err := kvcache.Open(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	return d
}
