package download

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestManagerQueueSplitFiles downloads a split model's three parts
// through a queue that runs two at a time.
func TestManagerQueueSplitFiles(t *testing.T) {
	dir := t.TempDir()
	type part struct {
		fs   *fileServer
		url  string
		dest string
	}
	var parts []part
	for i := 1; i <= 3; i++ {
		fs, srv := newFileServer(t, 300<<10+i)
		fs.set(func(fs *fileServer) { fs.pace = time.Millisecond })
		parts = append(parts, part{fs, srv.URL, filepath.Join(dir, fmt.Sprintf("m-%05d-of-00003.gguf", i))})
	}
	m, err := NewManager(Config{Options: fastOpts(), Concurrency: 2, QueueFile: filepath.Join(dir, "queue.json")})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	var ds []*Download
	for _, p := range parts {
		d, err := m.Add(Request{URL: p.url, Dest: p.dest, SHA256: sum(p.fs.data)})
		if err != nil {
			t.Fatal(err)
		}
		ds = append(ds, d)
	}
	if again, _ := m.Add(Request{URL: parts[0].url, Dest: parts[0].dest}); again != ds[0] {
		t.Error("adding a queued file again made a second download")
	}
	maxRunning := 0
	for !(ds[0].IsDone() && ds[1].IsDone() && ds[2].IsDone()) {
		running := 0
		for _, d := range ds {
			if s := d.Status(); s == Running || s == Verifying {
				running++
			}
		}
		maxRunning = max(maxRunning, running)
		time.Sleep(2 * time.Millisecond)
	}
	if maxRunning > 2 {
		t.Errorf("%d downloads ran at once; the limit is 2", maxRunning)
	}
	for i, d := range ds {
		if err := d.Err(); err != nil {
			t.Fatal(err)
		}
		checkFile(t, parts[i].dest, parts[i].fs.data)
	}
	if len(m.Downloads()) != 3 {
		t.Errorf("%d downloads listed", len(m.Downloads()))
	}
	m.Forget()
	if len(m.Downloads()) != 0 {
		t.Errorf("%d downloads listed after Forget", len(m.Downloads()))
	}
	data, _ := os.ReadFile(filepath.Join(dir, "queue.json"))
	if string(data) != "[]" {
		t.Errorf("queue file after completion: %s", data)
	}
}

// TestManagerQueuePersists closes a manager mid-download and checks that
// a new one resumes the queue, keeping a paused entry paused.
func TestManagerQueuePersists(t *testing.T) {
	dir := t.TempDir()
	fs, srv := newFileServer(t, 1<<20)
	fs.holdAfter(512 << 10) // midway: Close stops it there
	fs2, srv2 := newFileServer(t, 100<<10)
	fs2.set(func(fs *fileServer) { fs.statuses = []int{503}; fs.retryAt = "1" }) // long enough to pause it first
	queue := filepath.Join(dir, "state", "queue.json")
	cfg := Config{Options: heldOpts(), Concurrency: 2, QueueFile: queue}
	m, err := NewManager(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dest, dest2 := filepath.Join(dir, "a.gguf"), filepath.Join(dir, "b.gguf")
	d, _ := m.Add(Request{URL: srv.URL, Dest: dest, SHA256: sum(fs.data)})
	d2, _ := m.Add(Request{URL: srv2.URL, Dest: dest2})
	m.Pause(d2)
	waitFor(t, "progress", func() bool { return d.BytesComplete() > 200<<10 })
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if err := d.Err(); err == nil || errors.Is(err, ErrCanceled) {
		t.Errorf("Close ended the download with %v; want a stop that keeps its data", err)
	}
	noFile(t, dest)
	if _, err := m.Add(Request{URL: srv.URL, Dest: dest}); !errors.Is(err, ErrClosed) {
		t.Errorf("Add after Close: %v", err)
	}

	fs.release()
	before := fs.served.Load()
	m2, err := NewManager(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer m2.Close()
	list := m2.Downloads()
	if len(list) != 2 {
		t.Fatalf("restored %d downloads; want 2", len(list))
	}
	if err := waitDone(t, list[0]); err != nil {
		t.Fatal(err)
	}
	checkFile(t, dest, fs.data)
	if again := fs.served.Load() - before; again > int64(len(fs.data))*4/5 {
		t.Errorf("restored download fetched %d of %d bytes again", again, len(fs.data))
	}
	time.Sleep(50 * time.Millisecond)
	if list[1].Status() != Paused || fs2.served.Load() != 0 || list[1].BytesComplete() != 0 {
		t.Fatalf("paused entry: status %v, %d bytes served", list[1].Status(), fs2.served.Load())
	}
	m2.Resume(list[1])
	if err := waitDone(t, list[1]); err != nil {
		t.Fatal(err)
	}
	checkFile(t, dest2, fs2.data)
}
