package download

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/churon/churon/internal/enum"
)

// Request names one file to fetch.
type Request struct {
	URL  string `json:"url"`
	Dest string `json:"dest"` // final path; DEST.part and DEST.part.json are kept beside it
	// SHA256 is the expected hex digest, when known. A mismatch keeps
	// nothing.
	SHA256 string `json:"sha256,omitempty"`
	// Size is the expected size in bytes when known (0: unknown). A server
	// that reports another size is refused before anything is written.
	Size int64 `json:"size,omitempty"`
	// Label is a name to show (e.g. "Qwen2.5 0.5B Q4_K_M, part 1 of 2").
	Label string `json:"label,omitempty"`
}

// Options tune a download. The zero value is usable: every field has a
// default.
type Options struct {
	// Client sends the requests (default: a client without an overall
	// timeout; stalls are detected per read instead).
	Client *http.Client
	// Authorize is called on every request before it is sent, e.g. to add
	// an access token. Go drops the Authorization header on redirects to
	// another host, so a token never reaches a CDN.
	Authorize func(*http.Request)
	// Connections is how many Range requests run at once for one file
	// (default 4).
	Connections int
	// MinChunk is the smallest piece worth its own connection (default
	// 16 MiB).
	MinChunk int64
	// StallTimeout: a connection that delivers no byte for this long is
	// dropped and retried (default 30 s).
	StallTimeout time.Duration
	// MaxRetries is how many consecutive attempts of one piece may fail
	// without any progress before the download fails (default 10).
	MaxRetries int
	// BackoffBase and BackoffMax bound the wait between attempts, which
	// doubles from BackoffBase (defaults 500 ms and 30 s). Retry-After
	// overrides it, up to MaxRetryAfter (default 5 min).
	BackoffBase, BackoffMax, MaxRetryAfter time.Duration
	// DiskMargin is kept free on the destination disk (default 512 MiB, or
	// 5% of the file when that is larger).
	DiskMargin int64
	// FreeSpace reports the bytes available in a directory (default: the
	// file system's own count; -1 means unknown and skips the check).
	FreeSpace func(dir string) (int64, error)
	// SaveInterval is how often the state file is brought up to date
	// (default 1 s).
	SaveInterval time.Duration
	// Overwrite replaces an existing destination instead of failing with
	// ErrExists (a destination whose SHA-256 matches is always kept).
	Overwrite bool
	// OnRetry, when set, hears of every failed attempt that will be tried
	// again, before the wait, so that a front end can say why no byte is
	// arriving. It is called from the download's goroutines, several at
	// once for a file fetched over several connections, and must not
	// block.
	OnRetry func(Retry)
}

// Retry is a failed attempt that is about to be tried again.
type Retry struct {
	// Attempt is the attempt that follows the wait (2 for the first
	// retry); Max is the most attempts there will be without progress.
	Attempt, Max int
	Wait         time.Duration
	Err          error
}

// Reason says in a few words what failed, for a line such as "retrying
// in 4 s (attempt 2 of 8): connection reset".
func (r Retry) Reason() string {
	var he *HTTPError
	var ne net.Error
	switch {
	case errors.As(r.Err, &he):
		if t := http.StatusText(he.Status); t != "" {
			return fmt.Sprintf("the server answered %d %s", he.Status, t)
		}
		return fmt.Sprintf("the server answered %d", he.Status)
	case errors.Is(r.Err, errStalled):
		return "no data arrived for a while"
	case errors.Is(r.Err, errShortBody), errors.Is(r.Err, io.ErrUnexpectedEOF), errors.Is(r.Err, io.EOF):
		return "the connection ended early"
	case errors.Is(r.Err, syscall.ECONNRESET):
		return "connection reset"
	case errors.As(r.Err, &ne) && ne.Timeout():
		return "timed out"
	}
	return "the connection failed"
}

func (o Options) withDefaults() Options {
	if o.Client == nil {
		o.Client = &http.Client{Transport: &http.Transport{
			Proxy:                 http.ProxyFromEnvironment,
			ResponseHeaderTimeout: 60 * time.Second,
			TLSHandshakeTimeout:   30 * time.Second,
			MaxIdleConnsPerHost:   16,
		}}
	}
	if o.Connections <= 0 {
		o.Connections = 4
	}
	if o.MinChunk <= 0 {
		o.MinChunk = 16 << 20
	}
	if o.StallTimeout <= 0 {
		o.StallTimeout = 30 * time.Second
	}
	if o.MaxRetries <= 0 {
		o.MaxRetries = 10
	}
	if o.BackoffBase <= 0 {
		o.BackoffBase = 500 * time.Millisecond
	}
	if o.BackoffMax <= 0 {
		o.BackoffMax = 30 * time.Second
	}
	if o.MaxRetryAfter <= 0 {
		o.MaxRetryAfter = 5 * time.Minute
	}
	if o.DiskMargin <= 0 {
		o.DiskMargin = 512 << 20
	}
	if o.FreeSpace == nil {
		o.FreeSpace = freeSpace
	}
	if o.SaveInterval <= 0 {
		o.SaveInterval = time.Second
	}
	return o
}

// Status is where a download stands.
type Status int32

const (
	Queued    Status = iota // waiting for a slot in the Manager's queue
	Running                 // fetching
	Paused                  // stopped by Pause; partial data kept
	Verifying               // computing the SHA-256
	Completed               // the file is in place
	Failed                  // Err says why; partial data kept unless the error says otherwise
	Canceled                // stopped by Cancel; partial data removed
)

var statusNames = [...]string{Queued: "queued", Running: "running", Paused: "paused", Verifying: "verifying",
	Completed: "completed", Failed: "failed", Canceled: "canceled"}

func (s Status) String() string { return enum.Name(s, "Status", statusNames[:]) }

// final reports whether a download in this status has ended.
func (s Status) final() bool { return s == Completed || s == Failed || s == Canceled }

// Download is a handle on one file being fetched. All its methods are safe
// for concurrent use.
type Download struct {
	req  Request
	opt  Options
	slot func(ctx context.Context) (release func(), err error) // the Manager's queue; nil when alone
	// ending runs on the download's goroutine once its final status is
	// set and before Done closes, so that whoever sees the download done
	// also sees the Manager's queue file without it.
	ending func()

	done chan struct{}
	err  error // set before done is closed

	status    atomic.Int32
	completed atomic.Int64 // bytes on disk
	size      atomic.Int64 // -1 until known
	fetched   atomic.Int64 // bytes received from the network in this process
	rate      atomic.Uint64
	started   time.Time

	paused   atomic.Bool
	canceled atomic.Bool
	wake     chan struct{}

	mu     sync.Mutex
	st     *state
	onDone []func(*Download)
}

// Start begins fetching req in the background and returns its handle.
// Cancelling ctx stops the download but keeps its partial data, so that it
// can resume later (Cancel, by contrast, discards it).
func Start(ctx context.Context, req Request, opt Options) *Download {
	d := newDownload(req, opt)
	go d.run(ctx)
	return d
}

func newDownload(req Request, opt Options) *Download {
	d := &Download{req: req, opt: opt.withDefaults(), done: make(chan struct{}), wake: make(chan struct{}, 1), started: time.Now()}
	d.req.SHA256 = strings.ToLower(strings.TrimSpace(req.SHA256))
	d.size.Store(-1)
	if req.Size > 0 {
		d.size.Store(req.Size)
	}
	return d
}

// Request returns what is being fetched.
func (d *Download) Request() Request { return d.req }

// Done is closed when the download has ended, one way or another.
func (d *Download) Done() <-chan struct{} { return d.done }

// IsDone reports whether the download has ended.
func (d *Download) IsDone() bool {
	select {
	case <-d.done:
		return true
	default:
		return false
	}
}

// Err waits for the download to end and returns nil when the file is in
// place.
func (d *Download) Err() error {
	<-d.done
	return d.err
}

// Status returns where the download stands.
func (d *Download) Status() Status { return Status(d.status.Load()) }

// BytesComplete returns the bytes on disk so far (including those from an
// earlier run that this one resumed).
func (d *Download) BytesComplete() int64 { return d.completed.Load() }

// BytesFetched returns the bytes received from the network by this
// process: what resuming saved shows as BytesComplete - BytesFetched.
func (d *Download) BytesFetched() int64 { return d.fetched.Load() }

// Size returns the file's size, or -1 while unknown.
func (d *Download) Size() int64 { return d.size.Load() }

// Progress returns the completed fraction in [0, 1], or 0 while the size
// is unknown.
func (d *Download) Progress() float64 {
	s := d.Size()
	if s <= 0 {
		if d.Status() == Completed {
			return 1
		}
		return 0
	}
	return math.Min(1, float64(d.BytesComplete())/float64(s))
}

// Rate returns the recent transfer rate in bytes per second.
func (d *Download) Rate() float64 { return math.Float64frombits(d.rate.Load()) }

// ETA returns the estimated time left, or -1 when it cannot be estimated.
func (d *Download) ETA() time.Duration {
	s, r := d.Size(), d.Rate()
	if s < 0 || r <= 0 {
		return -1
	}
	left := float64(s - d.BytesComplete())
	if left <= 0 {
		return 0
	}
	return time.Duration(left / r * float64(time.Second))
}

// Pause stops fetching and keeps the partial data; Resume continues. A
// paused download gives up its slot in a Manager's queue.
func (d *Download) Pause() { d.paused.Store(true); d.poke() }

// Resume continues a paused download.
func (d *Download) Resume() { d.paused.Store(false); d.poke() }

// Cancel stops the download and removes its partial data. Err then
// returns ErrCanceled (unless the download had already ended).
func (d *Download) Cancel() { d.canceled.Store(true); d.poke() }

func (d *Download) poke() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// OnDone registers f to run (in its own goroutine) when the download ends.
func (d *Download) OnDone(f func(*Download)) {
	d.mu.Lock()
	if !d.IsDone() {
		d.onDone = append(d.onDone, f)
		d.mu.Unlock()
		return
	}
	d.mu.Unlock()
	go f(d)
}

func (d *Download) finish(err error) {
	switch {
	case err == nil:
		d.status.Store(int32(Completed))
	case errors.Is(err, ErrCanceled):
		d.status.Store(int32(Canceled))
	default:
		d.status.Store(int32(Failed))
	}
	d.rate.Store(0)
	if d.ending != nil {
		d.ending()
	}
	d.mu.Lock()
	d.err = err
	fs := d.onDone
	d.onDone = nil
	close(d.done)
	d.mu.Unlock()
	for _, f := range fs {
		go f(d)
	}
}

// run is the download's one controlling goroutine.
func (d *Download) run(ctx context.Context) {
	d.finish(d.loop(ctx))
}

func (d *Download) loop(ctx context.Context) error {
	dest := d.req.Dest
	if dest == "" || d.req.URL == "" {
		return fmt.Errorf("download: a request needs a URL and a destination")
	}
	if ok, err := d.checkExisting(ctx); ok || err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
		return fmt.Errorf("download: %w", err)
	}
	restarts := 0
	for {
		// Wait while paused (queued downloads may be paused too).
		if err := d.waitWhilePaused(ctx); err != nil {
			return d.stopped(err)
		}
		release := func() {}
		if d.slot != nil {
			d.status.Store(int32(Queued))
			r, err := d.slotOrWake(ctx)
			if err != nil {
				return d.stopped(err)
			}
			if r == nil { // paused or canceled while queued
				continue
			}
			release = r
		}
		d.status.Store(int32(Running))
		err := d.attempt(ctx)
		release()
		switch {
		case err == nil:
			return nil
		case errors.Is(err, errRestart) && restarts < 2:
			restarts++
			d.discard()
			continue
		case errors.Is(err, errRestart):
			d.discard()
			return fmt.Errorf("%w (%v)", ErrRemoteChanged, err)
		case errors.Is(err, errPaused):
			d.status.Store(int32(Paused))
			continue
		case errors.Is(err, ErrCanceled), errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
			return d.stopped(err)
		default:
			return err
		}
	}
}

// stopped ends a download that was cancelled (discarding its data) or
// whose context ended (keeping it).
func (d *Download) stopped(err error) error {
	if d.canceled.Load() || errors.Is(err, ErrCanceled) {
		d.discard()
		return ErrCanceled
	}
	return fmt.Errorf("download: %s: stopped: %w", filepath.Base(d.req.Dest), err)
}

func (d *Download) waitWhilePaused(ctx context.Context) error {
	for d.paused.Load() {
		if d.canceled.Load() {
			return ErrCanceled
		}
		d.status.Store(int32(Paused))
		d.rate.Store(0)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-d.wake:
		}
	}
	if d.canceled.Load() {
		return ErrCanceled
	}
	return nil
}

// slotOrWake waits for a queue slot; it returns a nil release when woken
// by Pause or Cancel first. The flags, not the wake-ups, are authoritative:
// a wake-up lost to this goroutine is harmless because attempt checks them.
func (d *Download) slotOrWake(ctx context.Context) (func(), error) {
	for {
		sctx, stop := context.WithCancel(ctx)
		go func() {
			select {
			case <-d.wake:
				stop()
			case <-sctx.Done():
			}
		}()
		r, err := d.slot(sctx)
		stop()
		if err == nil {
			return r, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if d.canceled.Load() {
			return nil, ErrCanceled
		}
		if d.paused.Load() {
			return nil, nil
		}
	}
}

// checkExisting handles a destination that is already there: kept when its
// hash matches (the download is then complete at once), otherwise an error
// unless Overwrite is set.
func (d *Download) checkExisting(ctx context.Context) (bool, error) {
	st, err := os.Stat(d.req.Dest)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("download: %w", err)
	}
	if d.req.SHA256 != "" && st.Mode().IsRegular() {
		d.status.Store(int32(Verifying))
		got, err := hashFile(ctx, d.req.Dest, nil)
		if err != nil {
			return false, err
		}
		if got == d.req.SHA256 {
			d.size.Store(st.Size())
			d.completed.Store(st.Size())
			return true, nil
		}
	}
	if d.opt.Overwrite {
		return false, nil
	}
	return false, fmt.Errorf("%w: %s", ErrExists, d.req.Dest)
}

// discard removes the partial data and its state.
func (d *Download) discard() {
	os.Remove(partPath(d.req.Dest))
	os.Remove(statePath(d.req.Dest))
	d.mu.Lock()
	d.st = nil
	d.mu.Unlock()
	d.completed.Store(0)
}

// hashFile returns the hex SHA-256 of a file, adding the bytes read to
// progress when it is not nil.
func hashFile(ctx context.Context, path string, progress *atomic.Int64) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("download: verify: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	buf := make([]byte, 1<<20)
	for {
		if err := ctx.Err(); err != nil {
			return "", err
		}
		n, err := f.Read(buf)
		h.Write(buf[:n])
		if progress != nil {
			progress.Add(int64(n))
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", fmt.Errorf("download: verify %s: %w", path, err)
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
