package download

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// refusedAddr is a local address where nothing listens: the port was
// just given up, so a connection to it is refused at once.
func refusedAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// offlineClient resolves names with a resolver that has no server to ask,
// as on a machine without a network, so the test depends on no real DNS
// server's answer or its speed.
func offlineClient() *http.Client {
	r := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, address string) (net.Conn, error) {
		return nil, &net.OpError{Op: "dial", Net: network, Err: errors.New("network is down (test resolver)")}
	}}
	dialer := &net.Dialer{Resolver: r}
	return &http.Client{Transport: &http.Transport{DialContext: dialer.DialContext}}
}

func TestUnreachableFailsWithoutRetrying(t *testing.T) {
	cases := []struct {
		name   string
		url    string
		client *http.Client
	}{
		{"refused", "http://" + refusedAddr(t) + "/m.gguf", nil},
		{"name does not resolve", "http://huggingface.invalid/m.gguf", offlineClient()},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			opt := fastOpts()
			opt.Client = c.client
			retried := recordRetries(&opt)
			dest := filepath.Join(t.TempDir(), "m.gguf")
			err := waitDone(t, Start(context.Background(), Request{URL: c.url, Dest: dest}, opt))
			var ue *UnreachableError
			if !errors.Is(err, ErrUnreachable) || !errors.As(err, &ue) {
				t.Fatalf("err = %v; want ErrUnreachable", err)
			}
			if !strings.Contains(c.url, ue.Host) || ue.Host == "" {
				t.Errorf("host %q; want the URL's host", ue.Host)
			}
			retries := retried()
			if len(retries) != 0 {
				t.Errorf("retried %d times (%v); an unreachable host is not retried", len(retries), retries[0].Err)
			}
			noFile(t, dest)
		})
	}
}

// recordRetries sets opt.OnRetry to keep the retries reported; the
// returned func is those reported so far.
func recordRetries(opt *Options) func() []Retry {
	var mu sync.Mutex
	var retries []Retry
	opt.OnRetry = func(r Retry) { mu.Lock(); retries = append(retries, r); mu.Unlock() }
	return func() []Retry {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(retries)
	}
}

func TestOnRetrySaysWhatIsRetried(t *testing.T) {
	fs, srv := newFileServer(t, 10<<10)
	fs.set(func(fs *fileServer) { fs.statuses = []int{503, 502} })
	opt := fastOpts()
	opt.Connections = 1
	retried := recordRetries(&opt)
	dest := filepath.Join(t.TempDir(), "m")
	if err := waitDone(t, Start(context.Background(), Request{URL: srv.URL, Dest: dest}, opt)); err != nil {
		t.Fatal(err)
	}
	checkFile(t, dest, fs.data)
	retries := retried()
	want := []struct {
		attempt int
		reason  string
	}{{2, "the server answered 503 Service Unavailable"}, {3, "the server answered 502 Bad Gateway"}}
	if len(retries) != len(want) {
		t.Fatalf("%d retries reported (%+v); want %d", len(retries), retries, len(want))
	}
	for i, w := range want {
		r := retries[i]
		if r.Attempt != w.attempt || r.Max != opt.MaxRetries+1 || r.Reason() != w.reason || r.Wait <= 0 {
			t.Errorf("retry %d: attempt %d of %d, wait %v, %q; want attempt %d of %d, a wait, %q",
				i, r.Attempt, r.Max, r.Wait, r.Reason(), w.attempt, opt.MaxRetries+1, w.reason)
		}
	}
}

func TestRetryReason(t *testing.T) {
	cases := []struct {
		err  error
		want string
	}{
		{&HTTPError{Status: 429}, "the server answered 429 Too Many Requests"},
		{errStalled, "no data arrived for a while"},
		{errors.Join(errors.New("read"), errShortBody), "the connection ended early"},
		{&net.OpError{Op: "read", Err: os.NewSyscallError("read", syscall.ECONNRESET)}, "connection reset"},
		{errors.New("something else"), "the connection failed"},
	}
	for _, c := range cases {
		if got := (Retry{Err: c.err}).Reason(); got != c.want {
			t.Errorf("Reason(%v) = %q; want %q", c.err, got, c.want)
		}
	}
}

// TestLostMidDownloadIsRetried: a host that served part of the file and
// then vanished (its port refusing) is retried, not failed at once — the
// network that answered before can come back.
func TestLostMidDownloadIsRetried(t *testing.T) {
	data := make([]byte, 256<<10)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Range") == "bytes=0-0" { // the probe: answered whole
			w.Header().Set("Content-Range", fmt.Sprintf("bytes 0-0/%d", len(data)))
			w.Header().Set("Content-Length", "1")
			w.WriteHeader(http.StatusPartialContent)
			w.Write(data[:1])
			return
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(data)))
		w.WriteHeader(http.StatusOK)
		w.Write(data[:len(data)/2])
		w.(http.Flusher).Flush()
		ln.Close() // no more connections: the next ones are refused
		panic(http.ErrAbortHandler)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })

	opt := fastOpts()
	opt.Connections = 1
	retried := recordRetries(&opt)
	dest := filepath.Join(t.TempDir(), "m.gguf")
	err = waitDone(t, Start(context.Background(), Request{URL: "http://" + ln.Addr().String() + "/m.gguf", Dest: dest}, opt))
	if err == nil || errors.Is(err, ErrUnreachable) {
		t.Fatalf("err = %v; want the retries to give up, not a fail-fast", err)
	}
	retries := retried()
	if len(retries) == 0 {
		t.Error("a connection lost mid-download was not retried")
	}
}
