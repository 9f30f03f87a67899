package download

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

func fastOpts() Options {
	return Options{
		Connections: 4, MinChunk: 64 << 10, StallTimeout: 300 * time.Millisecond, MaxRetries: 5,
		BackoffBase: 5 * time.Millisecond, BackoffMax: 50 * time.Millisecond, SaveInterval: 20 * time.Millisecond,
		FreeSpace: func(string) (int64, error) { return -1, nil },
	}
}

func waitDone(t *testing.T, d *Download) error {
	t.Helper()
	select {
	case <-d.Done():
		return d.Err()
	case <-time.After(30 * time.Second):
		t.Fatalf("download did not finish (status %v, %d bytes)", d.Status(), d.BytesComplete())
		return nil
	}
}

// checkFile asserts dest holds want and nothing partial is left.
func checkFile(t *testing.T, dest string, want []byte) {
	t.Helper()
	got, err := os.ReadFile(dest)
	if err != nil {
		t.Fatal(err)
	}
	if sum(got) != sum(want) {
		t.Fatalf("%s: %d bytes, hash %s; want %d bytes, %s", dest, len(got), sum(got), len(want), sum(want))
	}
	noLeftovers(t, dest)
}

func noLeftovers(t *testing.T, dest string) {
	t.Helper()
	for _, p := range []string{partPath(dest), statePath(dest)} {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s left behind (%v)", p, err)
		}
	}
}

func noFile(t *testing.T, dest string) {
	t.Helper()
	if _, err := os.Stat(dest); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("%s exists (%v); want no file under the final name", dest, err)
	}
}

// heldOpts are fastOpts for a download held midway by the server
// (fileServer.holdAfter): its connections wait there as long as the test
// takes to act, without giving up on the stall.
func heldOpts() Options {
	o := fastOpts()
	o.StallTimeout = 2 * time.Minute
	return o
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestParallelRangesReassembled(t *testing.T) {
	fs, srv := newFileServer(t, 1<<20+12345)
	dest := filepath.Join(t.TempDir(), "sub", "model.gguf")
	d := Start(context.Background(), Request{URL: srv.URL + "/m.gguf", Dest: dest, SHA256: sum(fs.data)}, fastOpts())
	if err := waitDone(t, d); err != nil {
		t.Fatal(err)
	}
	checkFile(t, dest, fs.data)
	if got := fs.ranged.Load(); got < 4 {
		t.Errorf("%d ranged answers; want the file fetched over 4 connections", got)
	}
	if d.Status() != Completed || d.Progress() != 1 || d.BytesComplete() != int64(len(fs.data)) {
		t.Errorf("status %v progress %v bytes %d", d.Status(), d.Progress(), d.BytesComplete())
	}
}

func TestUnevenChunks(t *testing.T) {
	for _, size := range []int{0, 1, 7, 64<<10 - 1, 64 << 10, 3*64<<10 + 5} {
		fs, srv := newFileServer(t, size)
		dest := filepath.Join(t.TempDir(), "f.bin")
		opt := fastOpts()
		opt.Connections = 3
		d := Start(context.Background(), Request{URL: srv.URL, Dest: dest, SHA256: sum(fs.data)}, opt)
		if err := waitDone(t, d); err != nil {
			t.Fatalf("size %d: %v", size, err)
		}
		checkFile(t, dest, fs.data)
	}
}

func TestServerMisbehaviourStillYieldsCorrectFile(t *testing.T) {
	cases := []struct {
		name  string
		setup func(fs *fileServer)
		opt   func(o *Options)
	}{
		{"drop every connection after 50 KiB", func(fs *fileServer) { fs.dropAfter = 50 << 10 }, nil},
		{"drop, single connection", func(fs *fileServer) { fs.dropAfter = 70 << 10 }, func(o *Options) { o.Connections = 1 }},
		{"stall twice", func(fs *fileServer) { fs.stallAt, fs.stalls = 40000, 2 }, func(o *Options) { o.StallTimeout = 150 * time.Millisecond }},
		{"stall before the first byte", func(fs *fileServer) { fs.stallAt, fs.stalls = 0, 3 }, func(o *Options) { o.StallTimeout = 150 * time.Millisecond }},
		{"Content-Length larger than the body", func(fs *fileServer) { fs.lieLength = 5000 }, nil},
		{"short answers to every range", func(fs *fileServer) { fs.short = true }, nil},
		{"500 then fine", func(fs *fileServer) { fs.statuses = []int{500, 502, 500} }, nil},
		{"no range support", func(fs *fileServer) { fs.noRanges = true }, nil},
		{"strong ETag", func(fs *fileServer) { fs.etag = `"abc"` }, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fs, srv := newFileServer(t, 400<<10+3)
			fs.set(c.setup)
			opt := fastOpts()
			if c.opt != nil {
				c.opt(&opt)
			}
			opt.MaxRetries = 20
			dest := filepath.Join(t.TempDir(), "m.gguf")
			d := Start(context.Background(), Request{URL: srv.URL, Dest: dest, SHA256: sum(fs.data)}, opt)
			if err := waitDone(t, d); err != nil {
				t.Fatal(err)
			}
			checkFile(t, dest, fs.data)
		})
	}
}

func TestWrongBytesKeepNothing(t *testing.T) {
	fs, srv := newFileServer(t, 300<<10)
	fs.set(func(fs *fileServer) { fs.corrupt = true })
	dest := filepath.Join(t.TempDir(), "m.gguf")
	d := Start(context.Background(), Request{URL: srv.URL, Dest: dest, SHA256: sum(fs.data)}, fastOpts())
	err := waitDone(t, d)
	var ce *ChecksumError
	if !errors.Is(err, ErrChecksum) || !errors.As(err, &ce) || ce.Expected != sum(fs.data) {
		t.Fatalf("err = %v; want a checksum error", err)
	}
	if !strings.Contains(err.Error(), "SHA-256 mismatch") || !strings.Contains(err.Error(), "discarded") {
		t.Errorf("message %q does not say what happened", err)
	}
	noFile(t, dest)
	noLeftovers(t, dest)
	if d.Status() != Failed {
		t.Errorf("status %v", d.Status())
	}
}

func TestHTTPStatuses(t *testing.T) {
	cases := []struct {
		name     string
		statuses []int
		retryAt  string
		want     error
		minWait  time.Duration
		requests int64 // exact count when > 0
	}{
		{"503 with Retry-After", []int{503}, "1", nil, 900 * time.Millisecond, 0},
		{"429 with Retry-After", []int{429, 429}, "1", nil, 1800 * time.Millisecond, 0},
		{"404", []int{404}, "", ErrNotFound, 0, 1},
		{"401", []int{401}, "", ErrUnauthorized, 0, 1},
		{"403", []int{403}, "", ErrUnauthorized, 0, 1},
		{"400", []int{400}, "", ErrHTTP, 0, 1},
		{"always 500", []int{500, 500, 500, 500, 500, 500, 500, 500}, "", ErrGaveUp, 0, 6},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fs, srv := newFileServer(t, 100<<10)
			fs.set(func(fs *fileServer) { fs.statuses, fs.retryAt = c.statuses, c.retryAt })
			dest := filepath.Join(t.TempDir(), "m.gguf")
			start := time.Now()
			d := Start(context.Background(), Request{URL: srv.URL + "/x?token=secret", Dest: dest, SHA256: sum(fs.data)}, fastOpts())
			err := waitDone(t, d)
			if c.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				checkFile(t, dest, fs.data)
				if el := time.Since(start); el < c.minWait {
					t.Errorf("finished after %v; Retry-After asked for at least %v", el, c.minWait)
				}
				return
			}
			if !errors.Is(err, c.want) {
				t.Fatalf("err = %v; want %v", err, c.want)
			}
			if strings.Contains(err.Error(), "secret") {
				t.Errorf("error %q leaks the URL's query", err)
			}
			if c.requests > 0 && fs.requests.Load() != c.requests {
				t.Errorf("%d requests; want %d", fs.requests.Load(), c.requests)
			}
			noFile(t, dest)
		})
	}
}

func TestRetryAfterIsCapped(t *testing.T) {
	fs, srv := newFileServer(t, 10<<10)
	fs.set(func(fs *fileServer) { fs.statuses, fs.retryAt = []int{503}, "3600" })
	opt := fastOpts()
	opt.MaxRetryAfter = 100 * time.Millisecond
	dest := filepath.Join(t.TempDir(), "m")
	if err := waitDone(t, Start(context.Background(), Request{URL: srv.URL, Dest: dest}, opt)); err != nil {
		t.Fatal(err)
	}
	checkFile(t, dest, fs.data)
}

func TestResumeAfterCut(t *testing.T) {
	fs, srv := newFileServer(t, 2<<20)
	fs.holdAfter(1 << 20) // half: it cannot finish before the cut
	dest := filepath.Join(t.TempDir(), "m.gguf")
	req := Request{URL: srv.URL, Dest: dest, SHA256: sum(fs.data)}
	ctx, cancel := context.WithCancel(context.Background())
	d := Start(ctx, req, heldOpts())
	waitFor(t, "a third of the file", func() bool { return d.BytesComplete() > int64(len(fs.data))/3 })
	cancel()
	if err := waitDone(t, d); err == nil || errors.Is(err, ErrCanceled) || !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v; want a stop that keeps the data", err)
	}
	noFile(t, dest)
	if _, err := os.Stat(statePath(dest)); err != nil {
		t.Fatalf("no state file after the cut: %v", err)
	}
	before := fs.served.Load()
	fs.release()
	d2 := Start(context.Background(), req, fastOpts())
	if err := waitDone(t, d2); err != nil {
		t.Fatal(err)
	}
	checkFile(t, dest, fs.data)
	again := fs.served.Load() - before
	if again > int64(len(fs.data))*3/4 {
		t.Errorf("resume fetched %d of %d bytes again", again, len(fs.data))
	}
	// The server may still have been writing to the cut connections when
	// "before" was read.
	if f := d2.BytesFetched(); f > again || again-f > 1<<20 {
		t.Errorf("BytesFetched %d, server sent %d", f, again)
	}
}

func TestPauseResume(t *testing.T) {
	fs, srv := newFileServer(t, 1<<20)
	fs.holdAfter(256 << 10)
	dest := filepath.Join(t.TempDir(), "m.gguf")
	d := Start(context.Background(), Request{URL: srv.URL, Dest: dest, SHA256: sum(fs.data)}, heldOpts())
	waitFor(t, "some progress", func() bool { return d.BytesComplete() > 100<<10 })
	d.Pause()
	waitFor(t, "paused", func() bool { return d.Status() == Paused })
	// Let the server send again: a connection the pause left open would
	// now move bytes.
	fs.release()
	n := d.BytesComplete()
	time.Sleep(100 * time.Millisecond)
	if d.BytesComplete() != n {
		t.Fatalf("bytes moved while paused: %d -> %d", n, d.BytesComplete())
	}
	noFile(t, dest)
	if d.Rate() != 0 || d.ETA() != -1 {
		t.Errorf("paused: rate %v ETA %v", d.Rate(), d.ETA())
	}
	d.Resume()
	if err := waitDone(t, d); err != nil {
		t.Fatal(err)
	}
	checkFile(t, dest, fs.data)
	if d.BytesFetched() > int64(len(fs.data))+64<<10 {
		t.Errorf("fetched %d bytes for a %d-byte file: pause lost data", d.BytesFetched(), len(fs.data))
	}
}

func TestCancelRemovesEverything(t *testing.T) {
	for _, when := range []string{"running", "paused"} {
		t.Run(when, func(t *testing.T) {
			fs, srv := newFileServer(t, 1<<20)
			fs.holdAfter(256 << 10)
			dest := filepath.Join(t.TempDir(), "m.gguf")
			d := Start(context.Background(), Request{URL: srv.URL, Dest: dest}, heldOpts())
			waitFor(t, "some progress", func() bool { return d.BytesComplete() > 50<<10 })
			if when == "paused" {
				d.Pause()
				waitFor(t, "paused", func() bool { return d.Status() == Paused })
			}
			d.Cancel()
			if err := waitDone(t, d); !errors.Is(err, ErrCanceled) {
				t.Fatalf("err = %v", err)
			}
			if d.Status() != Canceled {
				t.Errorf("status %v", d.Status())
			}
			noFile(t, dest)
			noLeftovers(t, dest)
		})
	}
}

// TestFileChangedOnServerRestarts pauses a download, changes the file on
// the server and resumes: the download starts over and ends with the new
// file. Without an ETag the new length is the only sign; a longer file
// answers every old range (206, with the new length in Content-Range).
func TestFileChangedOnServerRestarts(t *testing.T) {
	for _, etag := range []string{"", `"v1"`} {
		for _, size := range []int{700 << 10, 1300 << 10} {
			t.Run(fmt.Sprintf("etag=%s/%dKiB", etag, size>>10), func(t *testing.T) {
				fs, srv := newFileServer(t, 1<<20)
				fs.set(func(fs *fileServer) { fs.etag = etag })
				// Held a quarter of the way: paused with most of the old
				// file still to fetch, never after it was all fetched (a
				// download that has every byte is done, whatever the
				// server holds now).
				fs.holdAfter(256 << 10)
				dest := filepath.Join(t.TempDir(), "m.gguf")
				d := Start(context.Background(), Request{URL: srv.URL, Dest: dest}, heldOpts())
				waitFor(t, "some progress", func() bool { return d.BytesComplete() > 100<<10 })
				d.Pause()
				waitFor(t, "paused", func() bool { return d.Status() == Paused })
				newData := randomBytes(size, 99)
				fs.set(func(fs *fileServer) {
					fs.data = newData
					if etag != "" {
						fs.etag = `"v2"`
					}
				})
				fs.release()
				d.Resume()
				if err := waitDone(t, d); err != nil {
					t.Fatal(err)
				}
				checkFile(t, dest, newData)
			})
		}
	}
}

func TestSizeMismatchRefused(t *testing.T) {
	fs, srv := newFileServer(t, 10<<10)
	dest := filepath.Join(t.TempDir(), "m")
	err := waitDone(t, Start(context.Background(), Request{URL: srv.URL, Dest: dest, Size: int64(len(fs.data)) + 1}, fastOpts()))
	if !errors.Is(err, ErrSizeMismatch) {
		t.Fatalf("err = %v", err)
	}
	noFile(t, dest)
}

func TestFreeSpaceCheck(t *testing.T) {
	fs, srv := newFileServer(t, 1<<20)
	dest := filepath.Join(t.TempDir(), "m.gguf")
	opt := fastOpts()
	opt.DiskMargin = 1 << 20
	opt.FreeSpace = func(string) (int64, error) { return 1<<20 + 100, nil }
	err := waitDone(t, Start(context.Background(), Request{URL: srv.URL, Dest: dest}, opt))
	var se *SpaceError
	if !errors.Is(err, ErrInsufficientSpace) || !errors.As(err, &se) || se.Need != 2<<20 || se.Available != 1<<20+100 {
		t.Fatalf("err = %v", err)
	}
	if !strings.Contains(err.Error(), "need 2.0 MiB") || !strings.Contains(err.Error(), "1.0 MiB available") {
		t.Errorf("message %q", err)
	}
	noFile(t, dest)
	noLeftovers(t, dest)
	if fs.served.Load() > 1 {
		t.Errorf("%d bytes fetched before the space check", fs.served.Load())
	}
}

func TestFreeSpaceReal(t *testing.T) {
	n, err := freeSpace(t.TempDir())
	if err != nil || n == 0 {
		t.Fatalf("freeSpace = %d, %v", n, err)
	}
}

// fullDisk fails writes with ENOSPC once more than limit bytes are written.
type fullDisk struct {
	partFile
	limit   int64
	written *atomic.Int64
}

func (f fullDisk) WriteAt(p []byte, off int64) (int, error) {
	if f.written.Add(int64(len(p))) > f.limit {
		return 0, &os.PathError{Op: "write", Path: "m.gguf.part", Err: syscall.ENOSPC}
	}
	return f.partFile.WriteAt(p, off)
}

func TestDiskFullKeepsPartialAndResumes(t *testing.T) {
	fs, srv := newFileServer(t, 1<<20)
	dest := filepath.Join(t.TempDir(), "m.gguf")
	var written atomic.Int64
	openPart = func(path string, flag int) (partFile, error) {
		f, err := openPartFile(path, flag)
		if err != nil {
			return nil, err
		}
		return fullDisk{f, 300 << 10, &written}, nil
	}
	defer func() { openPart = openPartFile }()
	req := Request{URL: srv.URL, Dest: dest, SHA256: sum(fs.data)}
	err := waitDone(t, Start(context.Background(), req, fastOpts()))
	if !errors.Is(err, ErrDiskFull) || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("err = %v; want ErrDiskFull", err)
	}
	if !strings.Contains(err.Error(), "disk full") {
		t.Errorf("message %q", err)
	}
	noFile(t, dest)
	openPart = openPartFile
	d := Start(context.Background(), req, fastOpts())
	if err := waitDone(t, d); err != nil {
		t.Fatal(err)
	}
	checkFile(t, dest, fs.data)
	if d.BytesFetched() >= int64(len(fs.data)) {
		t.Errorf("fetched %d bytes again; the data written before the disk filled was lost", d.BytesFetched())
	}
}

func TestExistingDestination(t *testing.T) {
	fs, srv := newFileServer(t, 10<<10)
	dir := t.TempDir()
	good := filepath.Join(dir, "good")
	os.WriteFile(good, fs.data, 0o644)
	if err := waitDone(t, Start(context.Background(), Request{URL: srv.URL, Dest: good, SHA256: sum(fs.data)}, fastOpts())); err != nil {
		t.Fatal(err)
	}
	if fs.requests.Load() != 0 {
		t.Errorf("%d requests for a file already in place", fs.requests.Load())
	}
	bad := filepath.Join(dir, "bad")
	os.WriteFile(bad, []byte("other"), 0o644)
	if err := waitDone(t, Start(context.Background(), Request{URL: srv.URL, Dest: bad, SHA256: sum(fs.data)}, fastOpts())); !errors.Is(err, ErrExists) {
		t.Fatalf("err = %v; want ErrExists", err)
	}
	opt := fastOpts()
	opt.Overwrite = true
	if err := waitDone(t, Start(context.Background(), Request{URL: srv.URL, Dest: bad, SHA256: sum(fs.data)}, opt)); err != nil {
		t.Fatal(err)
	}
	checkFile(t, bad, fs.data)
}

func TestStaleStateIgnored(t *testing.T) {
	fs, srv := newFileServer(t, 200<<10)
	dest := filepath.Join(t.TempDir(), "m")
	// A state file for another URL, and garbage in the part file.
	os.WriteFile(partPath(dest), []byte("garbage"), 0o644)
	os.WriteFile(statePath(dest), []byte(`{"version":1,"url":"http://elsewhere/","size":7,"ranges":true,"chunks":[{"start":0,"end":6,"written":7}]}`), 0o644)
	if err := waitDone(t, Start(context.Background(), Request{URL: srv.URL, Dest: dest, SHA256: sum(fs.data)}, fastOpts())); err != nil {
		t.Fatal(err)
	}
	checkFile(t, dest, fs.data)
}

func TestParseContentRange(t *testing.T) {
	cases := []struct {
		in          string
		s, e, total int64
		ok          bool
	}{
		{"bytes 0-0/100", 0, 0, 100, true},
		{"bytes 10-99/100", 10, 99, 100, true},
		{"bytes 0-9/*", 0, 9, -1, true},
		{"bytes 10-100/100", 0, 0, 0, false},
		{"bytes 9-3/100", 0, 0, 0, false},
		{"bytes */100", 0, 0, 0, false},
		{"items 0-1/2", 0, 0, 0, false},
		{"", 0, 0, 0, false},
		{"bytes -1-3/10", 0, 0, 0, false},
	}
	for _, c := range cases {
		s, e, total, ok := parseContentRange(c.in)
		if ok != c.ok || (ok && (s != c.s || e != c.e || total != c.total)) {
			t.Errorf("%q: %d %d %d %v", c.in, s, e, total, ok)
		}
	}
}

func TestPlanTilesTheFile(t *testing.T) {
	for _, size := range []int64{0, 1, 5, 100, 1000, 1 << 30} {
		for _, n := range []int{1, 3, 4, 16} {
			st := state{Size: size, Ranges: true, Chunks: plan(size, true, n, 10)}
			if !st.valid() || len(st.Chunks) > n {
				t.Errorf("size %d n %d: %+v", size, n, st.Chunks)
			}
		}
	}
	if c := plan(1<<30, false, 8, 1); len(c) != 1 {
		t.Errorf("no ranges: %d chunks", len(c))
	}
}

func TestRetryAfterParse(t *testing.T) {
	if got := retryAfter("7"); got != 7*time.Second {
		t.Error(got)
	}
	if got := retryAfter(time.Now().Add(time.Hour).UTC().Format(http1123)); got < 59*time.Minute {
		t.Error(got)
	}
	for _, v := range []string{"", "-3", "soon"} {
		if got := retryAfter(v); got != 0 {
			t.Errorf("%q: %v", v, got)
		}
	}
}

const http1123 = "Mon, 02 Jan 2006 15:04:05 GMT"

func TestRateAndETA(t *testing.T) {
	var r rateSampler
	t0 := time.Now()
	r.add(t0, 0)
	if got := r.add(t0.Add(time.Second), 1000); got != 1000 {
		t.Errorf("rate %v", got)
	}
	// Sampled as transfer does: 10 s at 1000 B/s, then 6 s at 4000 B/s;
	// the old speed must have left the window.
	var r2 rateSampler
	var n int64
	var got float64
	for i := 0; i <= 64; i++ {
		if i > 40 {
			n += 1000
		} else if i > 0 {
			n += 250
		}
		got = r2.add(t0.Add(time.Duration(i)*250*time.Millisecond), n)
	}
	if got < 3800 || got > 4000 {
		t.Errorf("rate after a change of speed %v; want about 4000", got)
	}
	d := newDownload(Request{URL: "x", Dest: "y"}, Options{})
	d.size.Store(10000)
	d.completed.Store(4000)
	d.rate.Store(mathFloat(2000))
	if d.ETA() != 3*time.Second {
		t.Errorf("ETA %v", d.ETA())
	}
}
