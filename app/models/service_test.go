package models

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/churon/churon/assets/catalog"
	"github.com/churon/churon/models/download"
	"github.com/churon/churon/models/fit"
	"github.com/churon/churon/models/header"
	"github.com/churon/churon/models/hub/hubtest"
	"github.com/churon/churon/models/synth"
)

// events records a service's events for a test.
type events struct {
	t  *testing.T
	mu sync.Mutex
	ch chan Event
}

func record(t *testing.T, s *Service) *events {
	e := &events{t: t, ch: make(chan Event, 1024)}
	go func() {
		for ev := range s.Events() {
			e.ch <- ev
		}
		close(e.ch)
	}()
	return e
}

// until returns the events up to the first for which f is true; an
// Error event fails the test unless f accepts it.
func (e *events) until(f func(Event) bool) []Event {
	e.t.Helper()
	var got []Event
	timeout := time.After(30 * time.Second)
	for {
		select {
		case ev, ok := <-e.ch:
			if !ok {
				e.t.Fatalf("events closed; got %#v", got)
			}
			got = append(got, ev)
			if f(ev) {
				return got
			}
			if er, ok := ev.(Error); ok {
				e.t.Fatalf("%s: %v", er.Op, er.Err)
			}
		case <-timeout:
			e.t.Fatalf("timed out; got %#v", got)
		}
	}
}

// waitFor polls cond until it holds (a download's state moves without
// an event for each byte).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func isReady(ev Event) bool { _, ok := ev.(ModelReady); return ok }

// memorySettings is Settings in memory.
type memorySettings struct {
	mu sync.Mutex
	m  map[string]string
}

func (s *memorySettings) Setting(k string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.m[k]
	return v, ok
}

func (s *memorySettings) SetSetting(k, v string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[k] = v
	return nil
}

func fixedMemory(total, avail int64) func() (fit.Memory, error) {
	return func() (fit.Memory, error) { return fit.Memory{Total: total, Available: avail}, nil }
}

// options points a service at the fake hub and temporary folders, on a
// machine of 16 GiB (12 free).
func options(t *testing.T, h *hubtest.Hub) Options {
	dir := t.TempDir()
	return Options{
		HubURL:    h.URL(),
		Headers:   header.Reader{},
		Settings:  &memorySettings{m: map[string]string{}},
		Dir:       filepath.Join(dir, "models"),
		QueueFile: filepath.Join(dir, "cache", "downloads.json"),
		Memory:    fixedMemory(16<<30, 12<<30),
		Catalog:   testCatalog(t, h),
		Poll:      10 * time.Millisecond,
		Download: download.Options{
			FreeSpace:   func(string) (int64, error) { return -1, nil },
			BackoffBase: 10 * time.Millisecond,
		},
	}
}

// testCatalog is a one-model catalog whose model lives on the fake hub.
func testCatalog(t *testing.T, h *hubtest.Hub) *catalog.Catalog {
	t.Helper()
	spec := synth.Tiny("llama")
	f := h.File(hubtest.Repo, "tiny-llama-F32.gguf")
	c, err := catalog.Parse(fmt.Appendf(nil, `{"version":1,"recommended":["tiny-llama"],"models":[{
		"id":"tiny-llama","name":"Tiny Llama","family":"Llama","repo":%q,"file":"tiny-llama-F32.gguf","quant":"F32",
		"size":%d,"parameters":200000,"context":%d,"architecture":"llama","layers":%d,"heads":%d,"kv_heads":%d,
		"head_dim":%d,"embedding":%d,"license":"MIT","description":{"en":"A test model.","ko":"시험용 모델입니다."},"verified":true}]}`,
		hubtest.Repo, len(f.Data), spec.Context, spec.Layers, spec.Heads, spec.KVHeads, spec.Embd/spec.Heads, spec.Embd))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestDownloadCatalogModel: a catalog model is listed on the hub, queued,
// downloaded and checked, recorded in the library with its origin, and
// ModelReady asks for it to be loaded.
func TestDownloadCatalogModel(t *testing.T) {
	h := hubtest.New(t)
	s := New(options(t, h))
	defer s.Close()
	ev := record(t, s)
	m, ok := s.Catalog().Find("tiny-llama")
	if !ok {
		t.Fatal("no catalog model")
	}
	s.DownloadCatalog(m, true)
	s.DownloadCatalog(m, true) // a second click while the first lists: nothing more
	got := ev.until(isReady)
	ready := got[len(got)-1].(ModelReady)
	want := Dest(s.Dir(), hubtest.Repo, "tiny-llama-F32.gguf")
	if ready.Path != want || !ready.Load {
		t.Fatalf("ready %+v, want %s with load", ready, want)
	}
	if b, err := os.ReadFile(want); err != nil || !bytes.Equal(b, h.File(hubtest.Repo, "tiny-llama-F32.gguf").Data) {
		t.Fatalf("downloaded file differs (%v)", err)
	}
	var pending, ended int
	for _, e := range got {
		switch e := e.(type) {
		case Pending:
			pending++
		case DownloadEnded:
			if e.Status != download.Completed || e.Dest != want {
				t.Fatalf("ended %+v", e)
			}
			ended++
		}
	}
	if pending != 2 || ended != 1 {
		t.Fatalf("%d pending events (want on and off), %d ended: %#v", pending, ended, got)
	}
	lib := ev.until(func(e Event) bool { _, ok := e.(LibraryChanged); return ok })
	lc := lib[len(lib)-1].(LibraryChanged)
	if lc.Err != nil || len(lc.Models) != 1 || lc.Models[0].Origin.Repo != hubtest.Repo || lc.Models[0].Meta.Architecture != "llama" {
		t.Fatalf("library %+v", lc)
	}
}

// TestSplitModelIsReadyWhenEveryPartIs: the parts of a split model are
// queued together, labelled by PartLabel, and the model is ready only
// once the last part is in place.
func TestSplitModelIsReadyWhenEveryPartIs(t *testing.T) {
	h := hubtest.New(t)
	whole := hubtest.TinyGGUF(t, 1, 2) // F16
	half := len(whole) / 2
	h.Repos["test/split-GGUF"] = []hubtest.File{
		{Path: "big-F16-00001-of-00002.gguf", Data: whole[:half]},
		{Path: "big-F16-00002-of-00002.gguf", Data: whole[half:]},
	}
	opt := options(t, h)
	opt.PartLabel = func(name string, n, of int) string { return fmt.Sprintf("%s %d/%d", name, n, of) }
	s := New(opt)
	defer s.Close()
	ev := record(t, s)
	v, err := s.Resolve(context.Background(), "test/split-GGUF", "main", "F16")
	if err != nil || len(v.Files) != 2 {
		t.Fatalf("resolve: %v %+v", err, v)
	}
	// The second part is on disk already, from an earlier run: the model
	// is still ready only after the first part's download ended.
	second := Dest(s.Dir(), "test/split-GGUF", "big-F16-00002-of-00002.gguf")
	if err := os.MkdirAll(filepath.Dir(second), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(second, whole[half:], 0o644); err != nil {
		t.Fatal(err)
	}
	s.QueueVariant("test/split-GGUF", "main", v, false)
	got := ev.until(isReady)
	var labels []string
	for _, e := range got {
		if e, ok := e.(DownloadEnded); ok {
			labels = append(labels, e.Label)
		}
	}
	if len(labels) != 2 {
		t.Fatalf("ready before both parts ended: %q", labels)
	}
	ready := got[len(got)-1].(ModelReady)
	if ready.Load || ready.Path != Dest(s.Dir(), "test/split-GGUF", "big-F16-00001-of-00002.gguf") {
		t.Fatalf("ready %+v", ready)
	}
	for _, l := range labels {
		if l != "big-F16 1/2" && l != "big-F16 2/2" {
			t.Fatalf("label %q", l)
		}
	}
}

// heldService is a hub whose downloads of tiny-llama-Q8_0.gguf stop
// halfway (at half) until Unhold, a service over it, closed when the test
// ends, and the service's events.
func heldService(t *testing.T) (*hubtest.Hub, *Service, *events, int64) {
	t.Helper()
	h := hubtest.New(t)
	half := int64(len(h.File(hubtest.Repo, "tiny-llama-Q8_0.gguf").Data) / 2)
	h.Hold(half)
	s := New(options(t, h))
	t.Cleanup(s.Close)
	return h, s, record(t, s), half
}

// queueHeld queues the fake hub's Q8_0 file (load: to be loaded once in
// place) and waits until the hub holds it at half bytes; it returns its
// destination and download.
func queueHeld(t *testing.T, s *Service, half int64, load bool) (string, *download.Download) {
	t.Helper()
	v, err := s.Resolve(context.Background(), hubtest.Repo, "main", "Q8_0")
	if err != nil {
		t.Fatal(err)
	}
	s.QueueVariant(hubtest.Repo, "main", v, load)
	dest := Dest(s.Dir(), hubtest.Repo, v.Files[0].Path)
	var d *download.Download
	waitFor(t, "the hold", func() bool { d = s.Active(dest); return d != nil && d.BytesComplete() == half })
	return dest, d
}

// TestPauseResumeCancel: a held download pauses and resumes from where
// it was; a cancelled one leaves no file and no library entry.
func TestPauseResumeCancel(t *testing.T) {
	h, s, ev, half := heldService(t)
	dest, d := queueHeld(t, s, half, true)
	s.Pause(d)
	waitFor(t, "paused", func() bool { return d.Status() == download.Paused })
	if _, err := os.Stat(dest + ".part"); err != nil {
		t.Fatalf("paused, but the partial file is gone: %v", err)
	}
	s.Resume(d)
	waitFor(t, "running again", func() bool { return d.Status() == download.Running })
	s.Cancel(d)
	h.Unhold()
	got := ev.until(func(e Event) bool { e2, ok := e.(DownloadEnded); return ok && e2.Dest == dest })
	if end := got[len(got)-1].(DownloadEnded); end.Status != download.Canceled {
		t.Fatalf("ended %+v", end)
	}
	if _, err := os.Stat(dest); !os.IsNotExist(err) {
		t.Fatalf("a cancelled download left %s (%v)", dest, err)
	}
	ms, err := s.List(context.Background())
	if err != nil || len(ms) != 0 {
		t.Fatalf("library after cancel: %v %+v", err, ms)
	}
}

// TestRecommendByMemory: the catalog model is offered when it fits, not
// when the machine is too small, and offered anyway when the memory is
// unknown; a model of an architecture the engine lacks never is.
func TestRecommendByMemory(t *testing.T) {
	h := hubtest.New(t)
	cases := []struct {
		name  string
		mem   func() (fit.Memory, error)
		archs []string
		want  bool
	}{
		{"fits", fixedMemory(16<<30, 12<<30), nil, true},
		{"too small", fixedMemory(1<<10, 1<<10), nil, false},
		{"unknown", func() (fit.Memory, error) { return fit.Memory{}, fmt.Errorf("no /proc") }, nil, true},
		{"unsupported", fixedMemory(16<<30, 12<<30), []string{"qwen3"}, false},
		{"architectures unknown", fixedMemory(16<<30, 12<<30), nil, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			opt := options(t, h)
			opt.Memory, opt.Architectures = c.mem, c.archs
			s := New(opt)
			defer s.Close()
			m, _, ok := s.Recommend()
			if ok != c.want || (ok && m.ID != "tiny-llama") {
				t.Fatalf("recommend %v %q, want %v", ok, m.ID, c.want)
			}
		})
	}
}

// TestTokenIsSavedAndUsed: a new access token is kept in the settings and
// sent to the hub from then on.
func TestTokenIsSavedAndUsed(t *testing.T) {
	h := hubtest.New(t)
	opt := options(t, h)
	s := New(opt)
	defer s.Close()
	s.SetToken("  hf_secret \n")
	deadline := time.Now().Add(30 * time.Second)
	for {
		r, _ := http.NewRequest("GET", h.URL(), nil)
		s.Hub().Authorize(r)
		if r.Header.Get("Authorization") == "Bearer hf_secret" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the hub client never used the new token (%q)", r.Header.Get("Authorization"))
		}
		time.Sleep(5 * time.Millisecond)
	}
	if v, _ := opt.Settings.Setting(SettingHubToken); v != "hf_secret" {
		t.Fatalf("token setting %q", v)
	}
}

// TestQueueResumesAfterRestart: a download left unfinished by one service
// resumes when the next one starts, without being asked.
func TestQueueResumesAfterRestart(t *testing.T) {
	h := hubtest.New(t)
	half := int64(len(h.File(hubtest.Repo, "tiny-llama-F32.gguf").Data) / 2)
	h.Hold(half)
	opt := options(t, h)
	s := New(opt)
	record(t, s)
	m, _ := s.Catalog().Find("tiny-llama")
	s.DownloadCatalog(m, false)
	dest := Dest(s.Dir(), hubtest.Repo, m.File)
	waitFor(t, "the hold", func() bool { d := s.Active(dest); return d != nil && d.BytesComplete() == half })
	s.Close()
	h.Unhold()

	s2 := New(opt)
	defer s2.Close()
	ev2 := record(t, s2)
	ev2.until(func(e Event) bool {
		e2, ok := e.(DownloadEnded)
		return ok && e2.Dest == dest && e2.Status == download.Completed
	})
	if h.Ranged.Load() == 0 {
		t.Fatal("the resumed download started over instead of asking for the rest")
	}
}

// TestDest: the one rule for where a hub file goes.
func TestDest(t *testing.T) {
	for _, c := range []struct{ repo, file, want string }{
		{"org/Model-GGUF", "model-Q4_K_M.gguf", filepath.Join("lib", "org", "Model-GGUF", "model-Q4_K_M.gguf")},
		{"org/Model-GGUF", "Q4_K_M/model-00001-of-00002.gguf", filepath.Join("lib", "org", "Model-GGUF", "model-00001-of-00002.gguf")},
		{"", "plain.gguf", filepath.Join("lib", "plain.gguf")},
	} {
		if got := Dest("lib", c.repo, c.file); got != c.want {
			t.Errorf("Dest(%q, %q) = %q, want %q", c.repo, c.file, got, c.want)
		}
	}
}

// TestRemoteMetaReadsOnlyTheHeader: the exact fit estimate of a hub file
// costs its header, not its weights.
func TestRemoteMetaReadsOnlyTheHeader(t *testing.T) {
	h := hubtest.New(t)
	s := New(options(t, h))
	defer s.Close()
	f := h.File(hubtest.Repo, "tiny-llama-F32.gguf")
	meta, fetched, err := s.RemoteMeta(context.Background(), hubtest.Repo, "main", f.Path)
	if err != nil || meta.Architecture != "llama" || meta.Layers == 0 {
		t.Fatalf("meta %+v, %v", meta, err)
	}
	if fetched <= 0 || fetched >= int64(len(f.Data)) {
		t.Fatalf("fetched %d of a %d-byte file", fetched, len(f.Data))
	}
}

// TestPollSleepsWhileNothingMoves: with no download queued or running,
// the downloads' poll sleeps (an idle app is not woken by it); queueing
// wakes it, a paused download lets it sleep again, resuming wakes it, and
// once the file is in place it sleeps.
func TestPollSleepsWhileNothingMoves(t *testing.T) {
	h, s, ev, half := heldService(t)
	if _, err := s.List(context.Background()); err != nil { // opens the library and the queue
		t.Fatal(err)
	}
	waitFor(t, "the poll to sleep with no downloads", s.asleep.Load)
	dest, d := queueHeld(t, s, half, false)
	// The stir is a message to the poll's goroutine: it wakes soon after.
	waitFor(t, "the poll to wake for the running download", func() bool { return !s.asleep.Load() })
	s.Pause(d)
	waitFor(t, "paused", func() bool { return d.Status() == download.Paused })
	waitFor(t, "the poll to sleep with the download paused", s.asleep.Load)
	s.Resume(d)
	waitFor(t, "running again, the poll awake", func() bool { return d.Status() == download.Running && !s.asleep.Load() })
	h.Unhold()
	ev.until(func(e Event) bool { e2, ok := e.(DownloadEnded); return ok && e2.Dest == dest })
	waitFor(t, "the poll to sleep once the file is in place", s.asleep.Load)
}
