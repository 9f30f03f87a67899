package download

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/churon/churon/internal/atomicfile"
	"github.com/churon/churon/internal/httpfile"
)

// partFile is what a download writes to; tests substitute one that fails.
type partFile interface {
	io.WriterAt
	Truncate(int64) error
	Sync() error
	Close() error
}

func openPartFile(path string, flag int) (partFile, error) {
	return os.OpenFile(path, flag, 0o644)
}

// openPart is swapped by tests to inject write errors (a full disk).
var openPart = openPartFile

// attempt runs the download until it completes, is paused or cancelled, or
// fails.
func (d *Download) attempt(ctx context.Context) error {
	if d.canceled.Load() {
		return ErrCanceled
	}
	if d.paused.Load() {
		return errPaused
	}
	dest := d.req.Dest
	d.mu.Lock()
	st := d.st
	d.mu.Unlock()
	fresh := false
	if st == nil {
		var err error
		if st, err = loadState(dest, d.req); err != nil {
			return err
		}
		if st == nil {
			if st, err = d.probe(ctx); err != nil {
				return err
			}
			fresh = true
		}
	}
	if st.Size >= 0 {
		d.size.Store(st.Size)
	}
	d.completed.Store(st.written())
	if err := d.checkSpace(st); err != nil {
		return err
	}
	flag := os.O_RDWR
	if fresh {
		flag |= os.O_CREATE | os.O_TRUNC
	}
	f, err := openPart(partPath(dest), flag)
	if err != nil {
		return fmt.Errorf("download: %w", err)
	}
	if fresh {
		if st.Ranges && st.Size > 0 {
			if err := f.Truncate(st.Size); err != nil {
				f.Close()
				return diskErr(err)
			}
		}
		if err := st.save(dest); err != nil {
			f.Close()
			return err
		}
	}
	d.mu.Lock()
	d.st = st
	d.mu.Unlock()

	err = d.transfer(ctx, f, st)
	serr := d.saveState(f, st)
	if cerr := f.Close(); serr == nil && cerr != nil {
		serr = diskErr(cerr)
	}
	if err != nil {
		return err
	}
	if serr != nil {
		return serr
	}
	return d.complete(ctx, st)
}

// probe asks for the first byte to learn the size and whether ranges work.
func (d *Download) probe(ctx context.Context) (*state, error) {
	var st *state
	err := d.retry(ctx, func(attempts int) (bool, error) {
		resp, err := d.get(ctx, "bytes=0-0", "")
		if errors.Is(err, ErrUnreachable) {
			return false, err
		}
		if err != nil {
			return false, &retryable{err: err}
		}
		defer resp.Body.Close()
		s := &state{Version: stateVersion, URL: d.req.URL, SHA256: d.req.SHA256, Size: -1, ETag: resp.Header.Get("ETag")}
		switch resp.StatusCode {
		case http.StatusPartialContent:
			_, _, total, ok := parseContentRange(resp.Header.Get("Content-Range"))
			if !ok {
				return false, &retryable{err: fmt.Errorf("download: bad Content-Range %q", resp.Header.Get("Content-Range"))}
			}
			s.Size, s.Ranges = total, total >= 0
		case http.StatusOK:
			s.Size = resp.ContentLength
		case http.StatusRequestedRangeNotSatisfiable:
			// Only an empty file has no byte 0.
			if cr := resp.Header.Get("Content-Range"); cr != "bytes */0" {
				return false, &HTTPError{URL: d.req.URL, Status: resp.StatusCode}
			}
			s.Size, s.Ranges = 0, true
		default:
			return false, d.statusErr(resp)
		}
		st = s
		return true, nil
	})
	if err != nil {
		return nil, err
	}
	if d.req.Size > 0 && st.Size >= 0 && st.Size != d.req.Size {
		return nil, fmt.Errorf("%w: %s: the server has %d bytes, expected %d", ErrSizeMismatch, httpfile.Redact(d.req.URL), st.Size, d.req.Size)
	}
	st.Chunks = plan(st.Size, st.Ranges, d.opt.Connections, d.opt.MinChunk)
	return st, nil
}

// checkSpace refuses to start when the disk cannot hold the rest of the
// file plus a margin.
func (d *Download) checkSpace(st *state) error {
	size := st.Size
	if size < 0 {
		size = d.req.Size
	}
	if size <= 0 {
		return nil
	}
	dir := filepath.Dir(d.req.Dest)
	avail, err := d.opt.FreeSpace(dir)
	if err != nil || avail < 0 {
		return nil // unknown: the write errors will tell
	}
	margin := max(d.opt.DiskMargin, size/20)
	// The part file is sparse: only the bytes still to come take room.
	left := size - st.written()
	if need := left + margin; avail < need {
		return &SpaceError{Dir: dir, Need: need, Available: avail}
	}
	return nil
}

// transfer fetches every incomplete chunk at once and returns when all are
// complete, on the first lasting failure, or when paused or cancelled.
func (d *Download) transfer(ctx context.Context, f partFile, st *state) error {
	tctx, stop := context.WithCancel(ctx)
	defer stop()
	var todo []int
	for i := range st.Chunks {
		if d.remaining(st, i) != 0 {
			todo = append(todo, i)
		}
	}
	if len(todo) == 0 {
		return nil
	}
	errs := make(chan error, len(todo))
	for _, i := range todo {
		go func() { errs <- d.fetchChunk(tctx, f, st, i) }()
	}
	save := time.NewTicker(d.opt.SaveInterval)
	defer save.Stop()
	sample := time.NewTicker(250 * time.Millisecond)
	defer sample.Stop()
	rs := rateSampler{}
	rs.add(time.Now(), d.fetched.Load())

	var first error
	for pending := len(todo); pending > 0; {
		select {
		case err := <-errs:
			pending--
			if err != nil && first == nil {
				first = err
				stop()
			}
		case <-d.wake:
			if first == nil && d.canceled.Load() {
				first = ErrCanceled
				stop()
			} else if first == nil && d.paused.Load() {
				first = errPaused
				stop()
			}
		case <-save.C:
			if err := d.saveState(f, st); err != nil && first == nil {
				first = err
				stop()
			}
		case now := <-sample.C:
			d.rate.Store(mathFloat(rs.add(now, d.fetched.Load())))
		case <-ctx.Done():
			if first == nil {
				first = ctx.Err()
			}
		}
	}
	// Pause and Cancel may have raced with the last chunk's end.
	if first == nil && d.canceled.Load() {
		first = ErrCanceled
	}
	return first
}

func (d *Download) remaining(st *state, i int) int64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return st.Chunks[i].remaining()
}

// saveState syncs the part file, then records what is on disk.
func (d *Download) saveState(f partFile, st *state) error {
	d.mu.Lock()
	snap := *st
	snap.Chunks = append([]chunk(nil), st.Chunks...)
	d.mu.Unlock()
	if err := f.Sync(); err != nil {
		return diskErr(err)
	}
	return snap.save(d.req.Dest)
}

// fetchChunk fetches the rest of chunk i, retrying as needed.
func (d *Download) fetchChunk(ctx context.Context, f partFile, st *state, i int) error {
	return d.retry(ctx, func(attempts int) (bool, error) {
		d.mu.Lock()
		c := st.Chunks[i]
		if !st.Ranges && c.Written > 0 {
			// Without ranges a retry starts from the beginning.
			d.completed.Add(-c.Written)
			st.Chunks[i].Written, c.Written = 0, 0
		}
		d.mu.Unlock()
		if c.remaining() == 0 {
			return true, nil
		}
		n, err := d.fetchOnce(ctx, f, st, i, c)
		if err == nil {
			return d.remaining(st, i) == 0, nil
		}
		if n > 0 {
			if r, ok := err.(*retryable); ok {
				// Progress was made: this failure does not count against
				// the piece.
				return false, &retryable{err: r.err, wait: -1}
			}
		}
		return false, err
	})
}

// retry calls try until it reports done, or returns a non-retryable error,
// or MaxRetries consecutive attempts fail without progress. A retryable
// error with wait -1 resets the count and retries at once.
func (d *Download) retry(ctx context.Context, try func(attempts int) (bool, error)) error {
	fails := 0
	for {
		done, err := try(fails)
		if err == nil {
			if done {
				return nil
			}
			fails = 0
			continue
		}
		var r *retryable
		if !errors.As(err, &r) {
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		wait := r.wait
		if wait < 0 {
			fails = 0
			wait = 0
		} else {
			fails++
			if fails > d.opt.MaxRetries {
				return fmt.Errorf("%w (%d attempts): %s: %v", ErrGaveUp, fails, httpfile.Redact(d.req.URL), r.err)
			}
			if wait == 0 {
				wait = d.backoff(fails)
			}
			if d.opt.OnRetry != nil {
				d.opt.OnRetry(Retry{Attempt: fails + 1, Max: d.opt.MaxRetries + 1, Wait: wait, Err: r.err})
			}
		}
		if wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return ctx.Err()
			case <-t.C:
			}
		}
	}
}

// backoff doubles from BackoffBase up to BackoffMax, with ±25% jitter so
// that many connections do not retry in step.
func (d *Download) backoff(fails int) time.Duration {
	w := d.opt.BackoffBase
	for i := 1; i < fails && w < d.opt.BackoffMax; i++ {
		w *= 2
	}
	w = min(w, d.opt.BackoffMax)
	return time.Duration(float64(w) * (0.75 + 0.5*rand.Float64()))
}

// get sends a GET with an optional Range (and If-Range validator).
func (d *Download) get(ctx context.Context, rng, ifRange string) (*http.Response, error) {
	req, err := httpfile.NewGet(ctx, d.req.URL, d.opt.Authorize)
	if err != nil {
		return nil, fmt.Errorf("download: %w", err)
	}
	if rng != "" {
		req.Header.Set("Range", rng)
		if ifRange != "" {
			req.Header.Set("If-Range", ifRange)
		}
	}
	resp, err := d.opt.Client.Do(req)
	if err != nil {
		// Fail fast only while the host has never answered this process:
		// a name or a connection lost in mid-download (a Wi-Fi reconnect)
		// is the network coming back, and is retried.
		if cause := httpfile.Cause(err); unreachable(cause) && d.fetched.Load() == 0 {
			return nil, &UnreachableError{Host: req.URL.Host, Err: cause}
		}
		return nil, fmt.Errorf("download: %s: %w", httpfile.Redact(d.req.URL), httpfile.Cause(err))
	}
	return resp, nil
}

// statusErr classifies a failed response.
func (d *Download) statusErr(resp *http.Response) error {
	code := resp.StatusCode
	switch {
	case code == http.StatusTooManyRequests || code == http.StatusServiceUnavailable:
		return &retryable{err: &HTTPError{URL: d.req.URL, Status: code}, wait: min(retryAfter(resp.Header.Get("Retry-After")), d.opt.MaxRetryAfter)}
	case code == http.StatusRequestTimeout || code >= 500:
		return &retryable{err: &HTTPError{URL: d.req.URL, Status: code}}
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		return fmt.Errorf("%w: %s: HTTP %d", ErrUnauthorized, httpfile.Redact(d.req.URL), code)
	case code == http.StatusNotFound || code == http.StatusGone:
		return fmt.Errorf("%w: %s", ErrNotFound, httpfile.Redact(d.req.URL))
	}
	return &HTTPError{URL: d.req.URL, Status: code}
}

// retryAfter parses a Retry-After header (seconds or an HTTP date).
func retryAfter(v string) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if s, err := strconv.Atoi(v); err == nil {
		if s < 0 {
			return 0
		}
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		if w := time.Until(t); w > 0 {
			return w
		}
	}
	return 0
}

// fetchOnce makes one request for the rest of chunk c (index i) and writes
// what arrives. It returns the bytes written.
func (d *Download) fetchOnce(ctx context.Context, f partFile, st *state, i int, c chunk) (int64, error) {
	off := c.Start + c.Written
	rctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stall := time.AfterFunc(d.opt.StallTimeout, func() { cancel(errStalled) })
	defer stall.Stop()
	rng, ifRange := "", ""
	if st.Ranges {
		rng = fmt.Sprintf("bytes=%d-%d", off, c.End)
		if st.ETag != "" && !strings.HasPrefix(st.ETag, "W/") {
			ifRange = st.ETag
		}
	}
	resp, err := d.get(rctx, rng, ifRange)
	if errors.Is(err, ErrUnreachable) {
		return 0, err
	}
	if err != nil {
		if context.Cause(rctx) == errStalled {
			err = errStalled
		}
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		return 0, &retryable{err: err}
	}
	defer resp.Body.Close()
	want := c.remaining()
	switch resp.StatusCode {
	case http.StatusPartialContent:
		s, e, total, ok := parseContentRange(resp.Header.Get("Content-Range"))
		if st.Ranges && ok && total >= 0 && st.Size >= 0 && total != st.Size {
			// The file is another length now: it changed on the server
			// (without an ETag to say so), and the bytes on disk are of
			// the old one. Start over; retrying would only give up.
			return 0, errRestart
		}
		if !st.Ranges || !ok || s != off || e != c.End || total != st.Size {
			return 0, &retryable{err: fmt.Errorf("download: %s: asked for bytes %d-%d of %d, got Content-Range %q",
				httpfile.Redact(d.req.URL), off, c.End, st.Size, resp.Header.Get("Content-Range"))}
		}
	case http.StatusOK:
		if st.Ranges && !(off == 0 && c.End == st.Size-1) {
			// A full answer to a range request: the file changed (If-Range)
			// or the server stopped honouring ranges. Start over.
			return 0, errRestart
		}
		if st.Size >= 0 && resp.ContentLength >= 0 && resp.ContentLength != st.Size {
			return 0, errRestart
		}
	case http.StatusRequestedRangeNotSatisfiable:
		return 0, errRestart
	default:
		return 0, d.statusErr(resp)
	}

	buf := make([]byte, 256<<10)
	var got int64
	for {
		n := len(buf)
		if want >= 0 && int64(n) > want-got {
			n = int(want - got)
		}
		if n == 0 {
			return got, nil
		}
		n, rerr := resp.Body.Read(buf[:n])
		if n > 0 {
			stall.Reset(d.opt.StallTimeout)
			if _, werr := f.WriteAt(buf[:n], off+got); werr != nil {
				return got, diskErr(werr)
			}
			got += int64(n)
			d.mu.Lock()
			st.Chunks[i].Written += int64(n)
			d.mu.Unlock()
			d.completed.Add(int64(n))
			d.fetched.Add(int64(n))
		}
		if rerr == io.EOF {
			if want < 0 {
				// Unknown size: the end of the body is the end of the file.
				d.mu.Lock()
				st.Chunks[i].End = st.Chunks[i].Written - 1
				st.Size = st.Chunks[i].Written
				d.mu.Unlock()
				d.size.Store(st.Size)
				return got, nil
			}
			if got < want {
				return got, &retryable{err: fmt.Errorf("download: %s: %w (%d of %d bytes)", httpfile.Redact(d.req.URL), errShortBody, got, want)}
			}
			return got, nil
		}
		if rerr != nil {
			if ctx.Err() != nil {
				return got, ctx.Err()
			}
			if context.Cause(rctx) == errStalled {
				rerr = errStalled
			}
			return got, &retryable{err: fmt.Errorf("download: %s: %w", httpfile.Redact(d.req.URL), rerr)}
		}
	}
}

// diskErr names a full disk as such.
func diskErr(err error) error {
	if errors.Is(err, syscall.ENOSPC) {
		return fmt.Errorf("%w (the partial download is kept and resumes once space is freed): %w", ErrDiskFull, err)
	}
	return fmt.Errorf("download: write: %w", err)
}

// parseContentRange parses "bytes START-END/TOTAL" (TOTAL may be "*",
// returned as -1).
func parseContentRange(v string) (start, end, total int64, ok bool) {
	rest, found := strings.CutPrefix(strings.TrimSpace(v), "bytes ")
	if !found {
		return 0, 0, 0, false
	}
	rng, tot, found := strings.Cut(rest, "/")
	if !found {
		return 0, 0, 0, false
	}
	a, b, found := strings.Cut(rng, "-")
	if !found {
		return 0, 0, 0, false
	}
	var err1, err2, err3 error
	start, err1 = strconv.ParseInt(a, 10, 64)
	end, err2 = strconv.ParseInt(b, 10, 64)
	if tot == "*" {
		total = -1
	} else {
		total, err3 = strconv.ParseInt(tot, 10, 64)
	}
	if err1 != nil || err2 != nil || err3 != nil || start < 0 || end < start || (total >= 0 && end >= total) {
		return 0, 0, 0, false
	}
	return start, end, total, true
}

// complete verifies the finished part file and renames it into place.
func (d *Download) complete(ctx context.Context, st *state) error {
	dest := d.req.Dest
	part := partPath(dest)
	fi, err := os.Stat(part)
	if err != nil {
		return fmt.Errorf("download: %w", err)
	}
	if st.Size >= 0 && fi.Size() != st.Size {
		d.discard()
		return fmt.Errorf("download: %s: the part file has %d bytes, expected %d; starting over next time", dest, fi.Size(), st.Size)
	}
	if d.req.SHA256 != "" {
		d.status.Store(int32(Verifying))
		got, err := hashFile(ctx, part, nil)
		if err != nil {
			return err
		}
		if got != d.req.SHA256 {
			d.discard()
			return &ChecksumError{Path: dest, Expected: d.req.SHA256, Got: got}
		}
	}
	if err := os.Rename(part, dest); err != nil {
		return fmt.Errorf("download: %w", err)
	}
	atomicfile.SyncDir(filepath.Dir(dest))
	os.Remove(statePath(dest))
	d.completed.Store(fi.Size())
	d.size.Store(fi.Size())
	return nil
}
