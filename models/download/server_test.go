package download

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fileServer serves one byte slice and misbehaves on request.
type fileServer struct {
	data []byte

	mu        sync.Mutex
	noRanges  bool
	dropAfter int           // close the connection after this many body bytes per response (0: never)
	stallAt   int           // stop sending after this many body bytes of the first stalls responses
	stalls    int           // how many responses stall
	statuses  []int         // statuses for the first requests, in order
	retryAt   string        // Retry-After to send with 429/503
	lieLength int64         // added to Content-Length; the connection is cut when the body runs out
	short     bool          // send (and declare) only the first half of each range
	corrupt   bool          // flip a byte in the middle of every body
	pace      time.Duration // sleep between 16 KiB writes
	etag      string
	holdAt    int64         // with held: once this many body bytes are served in all, every response waits
	held      chan struct{} // closed by release

	requests atomic.Int64
	served   atomic.Int64 // body bytes sent
	ranged   atomic.Int64 // 206 answers
	statusAt []time.Time
}

func newFileServer(t *testing.T, size int) (*fileServer, *httptest.Server) {
	t.Helper()
	fs := &fileServer{data: randomBytes(size, uint64(size))}
	srv := httptest.NewServer(fs)
	t.Cleanup(srv.Close)
	t.Cleanup(fs.release) // first: srv.Close waits for the held responses
	return fs, srv
}

// holdAfter makes the server stop sending once it has served n body
// bytes in all (counting from the start), until release: a test that
// pauses, cuts or cancels a download "midway" holds it there, so that a
// slow test goroutine cannot let it finish first, however loaded the
// machine. A held response goes on waiting when the client retries
// (hold tests give a long StallTimeout) and ends when the client goes.
func (fs *fileServer) holdAfter(n int64) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.holdAt, fs.held = n, make(chan struct{})
}

// release lets held responses go on, and ends the hold.
func (fs *fileServer) release() {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.held != nil {
		close(fs.held)
		fs.holdAt, fs.held = 0, nil
	}
}

// wait blocks while the server is held; false: the client went away.
func (fs *fileServer) wait(r *http.Request) bool {
	fs.mu.Lock()
	held := fs.held
	if held == nil || fs.served.Load() < fs.holdAt {
		fs.mu.Unlock()
		return true
	}
	fs.mu.Unlock()
	select {
	case <-held:
		return true
	case <-r.Context().Done():
		return false
	}
}

func randomBytes(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 7))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

func (fs *fileServer) set(f func(fs *fileServer)) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	f(fs)
}

func (fs *fileServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	fs.requests.Add(1)
	fs.mu.Lock()
	if len(fs.statuses) > 0 {
		code := fs.statuses[0]
		fs.statuses = fs.statuses[1:]
		fs.statusAt = append(fs.statusAt, time.Now())
		ra := fs.retryAt
		fs.mu.Unlock()
		if ra != "" && (code == 429 || code == 503) {
			w.Header().Set("Retry-After", ra)
		}
		http.Error(w, http.StatusText(code), code)
		return
	}
	noRanges, dropAfter, lie, corrupt, pace, etag, short := fs.noRanges, fs.dropAfter, fs.lieLength, fs.corrupt, fs.pace, fs.etag, fs.short
	stallAt := -1
	if fs.stalls > 0 {
		fs.stalls--
		stallAt = fs.stallAt
	}
	data := fs.data
	fs.mu.Unlock()

	start, end := int64(0), int64(len(data))-1
	status := http.StatusOK
	if rg := r.Header.Get("Range"); rg != "" && !noRanges {
		if ir := r.Header.Get("If-Range"); ir != "" && ir != etag {
			rg = "" // changed: the whole file
		}
		if rg != "" {
			s, e, ok := parseRange(rg, int64(len(data)))
			if !ok {
				w.Header().Set("Content-Range", fmt.Sprintf("bytes */%d", len(data)))
				w.WriteHeader(http.StatusRequestedRangeNotSatisfiable)
				return
			}
			start, end, status = s, e, http.StatusPartialContent
			w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", s, e, len(data)))
		}
	}
	if etag != "" {
		w.Header().Set("ETag", etag)
	}
	if !noRanges {
		w.Header().Set("Accept-Ranges", "bytes")
	}
	body := append([]byte(nil), data[start:end+1]...)
	if short && len(body) > 1 {
		body = body[:len(body)/2]
	}
	if corrupt && len(body) > 0 {
		body[len(body)/2] ^= 0xff
	}
	w.Header().Set("Content-Length", strconv.FormatInt(int64(len(body))+lie, 10))
	w.WriteHeader(status)
	limit := len(body)
	if dropAfter > 0 && dropAfter < limit {
		limit = dropAfter
	}
	if stallAt >= 0 && stallAt < limit {
		limit = stallAt
	}
	for sent := 0; sent < limit; {
		if !fs.wait(r) {
			return
		}
		n := min(16<<10, limit-sent)
		if _, err := w.Write(body[sent : sent+n]); err != nil {
			return
		}
		fs.served.Add(int64(n))
		sent += n
		if pace > 0 {
			w.(http.Flusher).Flush()
			time.Sleep(pace)
		}
	}
	if stallAt >= 0 && stallAt < len(body) {
		w.(http.Flusher).Flush()
		<-r.Context().Done() // stall until the client gives up
		return
	}
	if limit < len(body) || lie > 0 {
		// Cut the connection mid-body (or short of the promised length).
		w.(http.Flusher).Flush()
		if hj, ok := w.(http.Hijacker); ok {
			if c, _, err := hj.Hijack(); err == nil {
				c.Close()
			}
		}
		return
	}
	if status == http.StatusPartialContent {
		fs.ranged.Add(1)
	}
}

func parseRange(h string, size int64) (int64, int64, bool) {
	v, ok := strings.CutPrefix(h, "bytes=")
	if !ok || strings.Contains(v, ",") {
		return 0, 0, false
	}
	a, b, ok := strings.Cut(v, "-")
	if !ok {
		return 0, 0, false
	}
	s, err := strconv.ParseInt(a, 10, 64)
	if err != nil || s >= size {
		return 0, 0, false
	}
	e := size - 1
	if b != "" {
		if e, err = strconv.ParseInt(b, 10, 64); err != nil || e < s {
			return 0, 0, false
		}
		e = min(e, size-1)
	}
	return s, e, true
}
