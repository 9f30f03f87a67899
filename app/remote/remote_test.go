package remote

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/churon/churon/app/api/openai"
	api "github.com/churon/churon/app/api/session"
	"github.com/churon/churon/app/export"
	"github.com/churon/churon/app/session"
	"github.com/churon/churon/app/store"
	"github.com/churon/churon/app/store/storetest"
	"github.com/churon/churon/internal/remotetest"
)

const waitLimit = 2 * time.Minute

// client is a session manager (the window's, or churon chat's) whose
// connections point at servers elsewhere.
type client struct {
	t      *testing.T
	st     *store.Store
	m      *session.Manager
	conns  *Connections
	events chan api.Event
	logs   *bytes.Buffer
}

func newClient(t *testing.T) *client {
	t.Helper()
	dir := t.TempDir()
	st, err := store.Open(context.Background(), filepath.Join(dir, "client.db"))
	if err != nil {
		t.Fatal(err)
	}
	conns := Open(filepath.Join(dir, FileName), nil)
	logs := &bytes.Buffer{}
	set := session.DefaultSettings()
	set.MaxTokens = 32 // answers of a few words: the servers here are tiny models
	m := session.New(st, session.Options{Remote: conns, Defaults: &set, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	c := &client{t: t, st: st, m: m, conns: conns, events: make(chan api.Event, 4096), logs: logs}
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		for ev := range m.Events() {
			c.events <- ev
		}
		close(c.events)
	}()
	t.Cleanup(func() {
		m.Close()
		<-drained
		st.Close()
	})
	return c
}

// load loads a remote model and waits for it.
func (c *client) load(path string) api.ModelInfo {
	c.t.Helper()
	if err := c.m.LoadModel(path); err != nil {
		c.t.Fatal(err)
	}
	for {
		switch e := c.next(path + " did not load").(type) {
		case api.ModelLoaded:
			return e.Info
		case api.Error:
			c.t.Fatalf("load %s: %v", path, e.Err)
		}
	}
}

// next is the manager's next event; none within waitLimit fails the
// test, saying what did not happen.
func (c *client) next(what string) api.Event {
	c.t.Helper()
	select {
	case ev := <-c.events:
		return ev
	case <-time.After(waitLimit):
		c.t.Fatal(what)
		return nil
	}
}

// ask sends text in a new conversation and waits for its answer's end:
// the text streamed, its Stats and Done.
func (c *client) ask(text string) (conv int64, streamed string, stats api.Stats, done api.Done) {
	c.t.Helper()
	cv, err := c.m.NewConversation("")
	if err != nil {
		c.t.Fatal(err)
	}
	if _, err := c.m.Send(cv.ID, text); err != nil {
		c.t.Fatal(err)
	}
	for {
		switch e := c.next("no answer").(type) {
		case api.Token:
			if e.Conv == cv.ID && !e.Reasoning {
				streamed = streamed[:min(e.Offset, len(streamed))] + e.Text
			}
		case api.Stats:
			if e.Conv == cv.ID {
				stats = e
			}
		case api.Done:
			if e.Conv == cv.ID {
				return cv.ID, streamed, stats, e
			}
		}
	}
}

func (c *client) answer(conv int64) api.Message {
	c.t.Helper()
	msgs, err := c.m.Messages(conv)
	if err != nil {
		c.t.Fatal(err)
	}
	if len(msgs) == 0 || msgs[len(msgs)-1].Role != api.RoleAssistant {
		c.t.Fatalf("no answer stored: %+v", msgs)
	}
	return msgs[len(msgs)-1]
}

// TestChuronServe: a conversation on a model that Churon's own server
// serves, with a key, streams, is stored with the connection and model
// that answered, and exports and imports with them — and the key is in
// none of it.
func TestChuronServe(t *testing.T) {
	srv := remotetest.Serve(t, remotetest.Key)
	c := newClient(t)
	if _, err := c.conns.Add(Connection{Name: "local", BaseURL: srv.Base}, remotetest.Key, false); err != nil {
		t.Fatal(err)
	}
	ids, err := c.conns.Refresh(context.Background(), "local")
	if err != nil || len(ids) != 1 || ids[0] != srv.Model {
		t.Fatalf("models %v, %v; want [%s]", ids, err, srv.Model)
	}
	rep, err := c.conns.Test(context.Background(), "local", "")
	if err != nil || !rep.Streaming || !rep.Logprobs || rep.Model != srv.Model || rep.Latency <= 0 {
		t.Fatalf("test: %+v, %v", rep, err)
	}

	path := api.RemotePath("local", srv.Model)
	info := c.load(path)
	if info.Remote != "local" || info.Path != path || !strings.Contains(info.Backend, srv.Base) {
		t.Errorf("loaded %+v", info)
	}
	conv, streamed, stats, done := c.ask("Once upon a time")
	if done.Reason == api.ReasonError {
		t.Fatalf("answer failed: %v", done.Err)
	}
	ans := c.answer(conv)
	if ans.Content == "" || ans.Content != streamed {
		t.Fatalf("stored %q, streamed %q", ans.Content, streamed)
	}
	if ans.Model != path || ans.PromptTokens == 0 || ans.GenTokens == 0 || ans.TTFT <= 0 {
		t.Errorf("stored answer: model %q, prompt %d, gen %d, ttft %v", ans.Model, ans.PromptTokens, ans.GenTokens, ans.TTFT)
	}
	if stats.PromptTokens != ans.PromptTokens || stats.GenTokens != ans.GenTokens {
		t.Errorf("stats %+v, stored %d/%d", stats, ans.PromptTokens, ans.GenTokens)
	}

	// Export, and import elsewhere: the connection and model stay.
	chats, err := c.m.Export(context.Background(), []int64{conv})
	if err != nil {
		t.Fatal(err)
	}
	var js bytes.Buffer
	if err := export.WriteJSON(&js, chats, export.Options{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(js.String(), `"model": "`+path+`"`) && !strings.Contains(js.String(), `"model":"`+path+`"`) {
		t.Errorf("the export does not say %q answered:\n%s", path, js.String())
	}
	st2 := storetest.Temp(t)
	m2 := session.New(st2, session.Options{})
	go func() {
		for range m2.Events() {
		}
	}()
	defer m2.Close()
	if _, err := m2.Import(context.Background(), bytes.NewReader(js.Bytes())); err != nil {
		t.Fatal(err)
	}
	all, _ := m2.ListConversations()
	if len(all) != 1 {
		t.Fatalf("%d conversations imported", len(all))
	}
	back, _ := m2.Messages(all[0].ID)
	if len(back) != 2 || back[1].Model != path {
		t.Fatalf("imported messages %+v", back)
	}
	noKey(t, remotetest.Key, "export", js.String())
	noKey(t, remotetest.Key, "logs", c.logs.String())
}

func noKey(t *testing.T, key, where, s string) {
	t.Helper()
	if strings.Contains(s, key) || strings.Contains(s, key[len(key)-8:]) {
		t.Errorf("the API key is in the %s", where)
	}
}

// TestFaults: each way a server fails ends the answer with one clear
// line (what happened: what to do), keeps what streamed before in the
// stored answer, marked, and never shows the key.
func TestFaults(t *testing.T) {
	c := newClient(t)
	// The fakes answer at once or never: short waits only decide how soon
	// "never" is said (the real servers' tests keep the defaults).
	c.conns.FirstByte, c.conns.Stall = 500*time.Millisecond, 500*time.Millisecond
	type fault struct {
		remotetest.Fault
		base string
		kind error
	}
	var faults []fault
	kinds := map[string]error{"401": openai.ErrUnauthorized, "404 model": openai.ErrNotFound, "429": openai.ErrRateLimited,
		"500": openai.ErrServer, "cut stream": openai.ErrStreamCut, "stall": openai.ErrStalled, "bad JSON": openai.ErrBadResponse,
		"error event": openai.ErrServer, "slow first byte": openai.ErrTimeout}
	for _, f := range remotetest.Faults() {
		srv := httptest.NewServer(f.Handler)
		t.Cleanup(srv.Close)
		faults = append(faults, fault{Fault: f, base: srv.URL, kind: kinds[f.Name]})
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + ln.Addr().String()
	ln.Close()
	faults = append(faults, fault{Fault: remotetest.Fault{Name: "refused"}, base: refused, kind: openai.ErrUnreachable})
	tlsSrv := httptest.NewTLSServer(remotetest.Faults()[0].Handler)
	t.Cleanup(tlsSrv.Close)
	faults = append(faults, fault{Fault: remotetest.Fault{Name: "TLS self-signed"}, base: tlsSrv.URL, kind: openai.ErrTLS})
	if len(faults) < 10 {
		t.Fatalf("%d faults; the table wants at least 10", len(faults))
	}

	for i, f := range faults {
		t.Run(f.Name, func(t *testing.T) {
			name := fmt.Sprintf("f%d", i)
			if _, err := c.conns.Add(Connection{Name: name, BaseURL: f.base}, remotetest.Key, false); err != nil {
				t.Fatal(err)
			}
			c.load(api.RemotePath(name, "m"))
			conv, streamed, _, done := c.ask("Once upon a time")
			if done.Reason != api.ReasonError || !errors.Is(done.Err, f.kind) {
				t.Fatalf("done %s %v, want an error of kind %v", done.Reason, done.Err, f.kind)
			}
			line := done.Err.Error()
			t.Logf("%s → %s", f.Name, line)
			if strings.Contains(line, "\n") || !strings.Contains(line, ": ") {
				t.Errorf("error %q: want one line, what happened: what to do", line)
			}
			noKey(t, remotetest.Key, "error", line)
			if streamed != f.Partial {
				t.Errorf("streamed %q, want %q", streamed, f.Partial)
			}
			ans := c.answer(conv)
			if ans.Content != f.Partial || ans.FinishReason != string(api.ReasonError) {
				t.Errorf("stored %q (%s), want %q, marked failed", ans.Content, ans.FinishReason, f.Partial)
			}
			if got := api.RemoteError(ans); got != line {
				t.Errorf("stored error %q, want %q", got, line)
			}
			// The conversation goes on: the person's message is intact, and
			// a retry is an answer like any other.
			msgs, _ := c.m.Messages(conv)
			if len(msgs) != 2 || msgs[0].Content != "Once upon a time" {
				t.Errorf("conversation %+v", msgs)
			}
		})
	}
	noKey(t, remotetest.Key, "logs", c.logs.String())
	b, _ := os.ReadFile(c.conns.Path())
	_ = b // the key is in the file here (no keyring): TestConnections checks its permissions
}

// TestStop: Stop cancels the request: the answer so far is kept as
// stopped.
func TestStop(t *testing.T) {
	c := newClient(t)
	c.conns.Stall = time.Hour
	srv := httptest.NewServer(remotetest.Faults()[5].Handler) // streams "Once", then holds
	defer srv.Close()
	if _, err := c.conns.Add(Connection{Name: "hold", BaseURL: srv.URL}, "", false); err != nil {
		t.Fatal(err)
	}
	c.load(api.RemotePath("hold", "m"))
	cv, _ := c.m.NewConversation("")
	if _, err := c.m.Send(cv.ID, "hi"); err != nil {
		t.Fatal(err)
	}
	for stopped := false; ; {
		switch e := c.next("Stop did not end the answer").(type) {
		case api.Token:
			if !stopped {
				stopped = true
				if err := c.m.Stop(cv.ID); err != nil {
					t.Fatal(err)
				}
			}
		case api.Done:
			if e.Reason != api.ReasonCancelled {
				t.Fatalf("done %s %v, want cancelled", e.Reason, e.Err)
			}
			if a := c.answer(cv.ID); a.Content != "Once" || a.FinishReason != string(api.ReasonCancelled) {
				t.Fatalf("stored %q (%s)", a.Content, a.FinishReason)
			}
			return
		}
	}
}

// TestRetry: after a cut stream, Regenerate (the chat's retry) asks
// again and the new answer is a version beside the cut one, which stays
// as it was, marked.
func TestRetry(t *testing.T) {
	var calls atomic.Int32
	cut := remotetest.Faults()[4] // "Once upon", then the connection drops
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && calls.Add(1) > 1 {
			w.Header().Set("Content-Type", "text/event-stream")
			io.Copy(io.Discard, r.Body)
			io.WriteString(w, remotetest.Chunk("Once upon a time, there was a cat.")+
				"data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
			return
		}
		cut.Handler(w, r)
	}))
	defer srv.Close()
	c := newClient(t)
	if _, err := c.conns.Add(Connection{Name: "flaky", BaseURL: srv.URL}, "", false); err != nil {
		t.Fatal(err)
	}
	c.load(api.RemotePath("flaky", "m"))
	conv, _, _, done := c.ask("Tell me a story")
	if done.Reason != api.ReasonError {
		t.Fatalf("first answer: %s", done.Reason)
	}
	first := c.answer(conv)
	if err := c.m.Regenerate(conv, first.ID); err != nil {
		t.Fatal(err)
	}
	for {
		ev := c.next("the retry did not end")
		if d, ok := ev.(api.Done); ok && d.Conv == conv {
			if d.Reason != api.ReasonEOS {
				t.Fatalf("retry: %s %v", d.Reason, d.Err)
			}
			break
		}
	}
	again := c.answer(conv)
	if again.Content != "Once upon a time, there was a cat." || again.Versions != 2 || api.RemoteError(again) != "" {
		t.Fatalf("after the retry: %+v", again)
	}
	all, err := c.st.AllMessages(context.Background(), conv)
	if err != nil {
		t.Fatal(err)
	}
	kept := false
	for _, m := range all {
		kept = kept || (m.ID == first.ID && m.Content == "Once upon" && api.RemoteError(m) != "")
	}
	if !kept {
		t.Errorf("the cut answer is not kept as a version: %+v", all)
	}
}

// TestUnknownConnection: a model of a connection that is not there is
// refused at once, and the model loaded stays loaded.
func TestUnknownConnection(t *testing.T) {
	srv := remotetest.Serve(t, "")
	c := newClient(t)
	if _, err := c.conns.Add(Connection{Name: "local", BaseURL: srv.Base}, "", false); err != nil {
		t.Fatal(err)
	}
	path := api.RemotePath("local", srv.Model)
	c.load(path)
	if err := c.m.LoadModel(api.RemotePath("nowhere", "m")); !errors.Is(err, ErrNotFound) {
		t.Fatalf("an unknown connection: %v, want ErrNotFound", err)
	}
	if st, err := c.m.Status(); err != nil || st.Model == nil || st.Model.Path != path {
		t.Fatalf("after the refusal: %+v, %v", st.Model, err)
	}
}
