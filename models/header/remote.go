package header

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"github.com/churon/churon/engine/gguf"
	"github.com/churon/churon/internal/httpfile"
	"github.com/churon/churon/models/fit"
)

// RemoteOptions tune Remote.
type RemoteOptions struct {
	Client    *http.Client
	Authorize func(*http.Request) // e.g. hub.Client.Authorize
}

// RemoteStats says what reading a remote header cost.
type RemoteStats struct {
	Requests     int   `json:"requests"`
	BytesFetched int64 `json:"bytes_fetched"`
	FileSize     int64 `json:"file_size"`
}

// ErrNoRanges: the server does not answer Range requests, so the header
// cannot be read without downloading the whole file.
var ErrNoRanges = errors.New("fit: the server does not support Range requests")

// Remote reads the header of a GGUF file over HTTP with Range requests
// only, never asking for more than the header plus one read-ahead chunk.
func Remote(ctx context.Context, rawURL string, opt RemoteOptions) (fit.Meta, RemoteStats, error) {
	if opt.Client == nil {
		opt.Client = http.DefaultClient
	}
	r := &rangeReader{ctx: ctx, url: rawURL, opt: opt}
	// The first request learns the size and brings the start of the header.
	first, total, err := r.fetch(0, 64<<10)
	if err != nil {
		return fit.Meta{}, r.stats(), err
	}
	r.size, r.head = total, first
	f, err := gguf.OpenReader(r, total)
	if err != nil {
		return fit.Meta{}, r.stats(), fmt.Errorf("fit: %s: %w", httpfile.Redact(rawURL), err)
	}
	m := Describe(f)
	if m.Name == "" {
		if u, err := url.Parse(rawURL); err == nil {
			m.Name = strings.TrimSuffix(u.Path[strings.LastIndex(u.Path, "/")+1:], ".gguf")
		}
	}
	return m, r.stats(), nil
}

// rangeReader is an io.ReaderAt over HTTP Range requests.
type rangeReader struct {
	ctx  context.Context
	url  string
	opt  RemoteOptions
	size int64
	head []byte // bytes [0, len(head)) from the first request

	mu       sync.Mutex
	requests int
	fetched  int64
}

func (r *rangeReader) stats() RemoteStats {
	r.mu.Lock()
	defer r.mu.Unlock()
	return RemoteStats{Requests: r.requests, BytesFetched: r.fetched, FileSize: r.size}
}

func (r *rangeReader) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("fit: negative offset")
	}
	if off >= r.size {
		return 0, io.EOF
	}
	n := 0
	if off < int64(len(r.head)) {
		n = copy(p, r.head[off:])
	}
	if n == len(p) {
		return n, nil
	}
	want := min(int64(len(p)-n), r.size-(off+int64(n)))
	if want <= 0 {
		return n, io.EOF
	}
	b, _, err := r.fetch(off+int64(n), want)
	n += copy(p[n:], b)
	if err != nil {
		return n, err
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// fetch asks for n bytes at off and returns them with the file's size.
func (r *rangeReader) fetch(off, n int64) ([]byte, int64, error) {
	req, err := httpfile.NewGet(r.ctx, r.url, r.opt.Authorize)
	if err != nil {
		return nil, 0, fmt.Errorf("fit: %w", err)
	}
	req.Header.Set("Range", fmt.Sprintf("bytes=%d-%d", off, off+n-1))
	resp, err := r.opt.Client.Do(req)
	if err != nil {
		return nil, 0, fmt.Errorf("fit: %s: %w", httpfile.Redact(r.url), httpfile.Cause(err))
	}
	defer resp.Body.Close()
	r.mu.Lock()
	r.requests++
	r.mu.Unlock()
	if resp.StatusCode == http.StatusOK {
		return nil, 0, fmt.Errorf("%w (%s answered with the whole file)", ErrNoRanges, httpfile.Redact(r.url))
	}
	if resp.StatusCode != http.StatusPartialContent {
		return nil, 0, fmt.Errorf("fit: %s: HTTP %d", httpfile.Redact(r.url), resp.StatusCode)
	}
	start, total, ok := contentRange(resp.Header.Get("Content-Range"))
	if !ok || start != off {
		return nil, 0, fmt.Errorf("fit: %s: unexpected Content-Range %q", httpfile.Redact(r.url), resp.Header.Get("Content-Range"))
	}
	// Never read more than was asked for, whatever the server sends.
	b, err := io.ReadAll(io.LimitReader(resp.Body, n))
	r.mu.Lock()
	r.fetched += int64(len(b))
	r.mu.Unlock()
	if err != nil {
		return b, total, fmt.Errorf("fit: %s: %w", httpfile.Redact(r.url), err)
	}
	return b, total, nil
}

func contentRange(v string) (start, total int64, ok bool) {
	rest, found := strings.CutPrefix(v, "bytes ")
	if !found {
		return 0, 0, false
	}
	rng, tot, found := strings.Cut(rest, "/")
	a, _, found2 := strings.Cut(rng, "-")
	if !found || !found2 {
		return 0, 0, false
	}
	s, err1 := strconv.ParseInt(a, 10, 64)
	t, err2 := strconv.ParseInt(tot, 10, 64)
	if err1 != nil || err2 != nil || s < 0 || t <= 0 {
		return 0, 0, false
	}
	return s, t, true
}
