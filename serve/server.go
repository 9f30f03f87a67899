package serve

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	apiserve "github.com/churon/churon/app/api/serve"
	"github.com/churon/churon/app/api/session"
)

// The API's types, under the names this package uses.
type (
	Config      = apiserve.Config
	Status      = apiserve.Status
	LogEntry    = apiserve.LogEntry
	RequestInfo = apiserve.RequestInfo
)

// Options are what the server is built over.
type Options struct {
	// Session answers the requests.
	Session session.Service
	// LogOutput receives a line per request when Config.Log is on (nil:
	// none; Status.Log keeps them either way).
	LogOutput io.Writer
	// Defaults are the sampling settings a request starts from; nil means
	// DefaultSampling().
	Defaults *session.Settings
}

// DefaultSampling is what a request's sampling starts from:
// llama-server's defaults (temperature 0.8, top-k 40, top-p 0.95, min-p
// 0.05) without a repeat penalty, which OpenAI's API does not have.
func DefaultSampling() session.Settings {
	s := session.Settings{Temperature: 0.8, TopK: 40, TopP: 0.95, MinP: 0.05, RepeatPenalty: 1, RepeatLastN: 64, Seed: -1}
	return s
}

// Timeouts of a connection.
const (
	readHeaderTimeout = 10 * time.Second
	readBodyTimeout   = 30 * time.Second
	idleTimeout       = 2 * time.Minute
	// writeStall is how long a write may wait for a client that does not
	// read before the request is given up (and its answer cancelled).
	writeStall = 30 * time.Second
)

// Server is the OpenAI-compatible API server. It implements
// apiserve.Controller; a Server is started and stopped any number of
// times.
type Server struct {
	opt     Options
	changed chan struct{}

	mu      sync.Mutex
	cfg     Config
	http    *http.Server
	ln      net.Listener
	stop    context.CancelFunc // cancels the requests in flight
	done    chan struct{}      // closed when Serve has returned
	active  map[string]*RequestInfo
	order   []string // active ids, oldest first
	served  int
	log     []LogEntry
	lastErr string
}

var _ apiserve.Controller = (*Server)(nil)

// New makes a server; Start starts it.
func New(opt Options) *Server {
	return &Server{opt: opt, changed: make(chan struct{}, 1), active: map[string]*RequestInfo{}}
}

// withDefaults fills in cfg's zero fields.
func withDefaults(cfg Config) Config {
	if cfg.Addr == "" {
		cfg.Addr = apiserve.DefaultAddr
	}
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = apiserve.DefaultMaxBody
	}
	if cfg.MaxMessages <= 0 {
		cfg.MaxMessages = apiserve.DefaultMaxMessages
	}
	if cfg.MaxTokens <= 0 {
		cfg.MaxTokens = apiserve.DefaultMaxTokens
	}
	if cfg.MaxConnections <= 0 {
		cfg.MaxConnections = apiserve.DefaultMaxConnections
	}
	return cfg
}

// ErrNeedsKey: the server was asked to listen beyond the loopback
// interface without an API key.
var ErrNeedsKey = errors.New("serve: listening on an address other than loopback needs an API key")

// Check reports what is wrong with cfg before anything listens.
func Check(cfg Config) error {
	cfg = withDefaults(cfg)
	if _, _, err := net.SplitHostPort(cfg.Addr); err != nil {
		return fmt.Errorf("serve: address %q: want host:port, e.g. %s", cfg.Addr, apiserve.DefaultAddr)
	}
	if !apiserve.IsLoopback(cfg.Addr) && strings.TrimSpace(cfg.APIKey) == "" {
		return fmt.Errorf("%w (%s)", ErrNeedsKey, cfg.Addr)
	}
	for _, o := range cfg.CORSOrigins {
		if o != "*" && !strings.HasPrefix(o, "http://") && !strings.HasPrefix(o, "https://") {
			return fmt.Errorf("serve: CORS origin %q: want * or an origin such as http://localhost:3000", o)
		}
	}
	return nil
}

// Start listens on cfg.Addr and serves in the background. A server that
// is on is stopped first.
func (s *Server) Start(cfg Config) error {
	cfg = withDefaults(cfg)
	if err := Check(cfg); err != nil {
		_ = s.Stop()
		s.mu.Lock()
		s.lastErr = err.Error()
		s.mu.Unlock()
		s.signal()
		return err
	}
	_ = s.Stop()
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		s.mu.Lock()
		s.lastErr = err.Error()
		s.mu.Unlock()
		s.signal()
		return fmt.Errorf("serve: %w", err)
	}
	s.serve(ln, cfg)
	return nil
}

// StartOn serves on a listener the caller made (tests, socket
// activation). cfg.Addr is only checked: ln is where it listens.
func (s *Server) StartOn(ln net.Listener, cfg Config) error {
	cfg = withDefaults(cfg)
	cfg.Addr = ln.Addr().String()
	if err := Check(cfg); err != nil {
		return err
	}
	_ = s.Stop()
	s.serve(ln, cfg)
	return nil
}

func (s *Server) serve(ln net.Listener, cfg Config) {
	base, cancel := context.WithCancel(context.Background())
	h := &handler{s: s, cfg: cfg, slots: make(chan struct{}, cfg.MaxConnections)}
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: readHeaderTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    64 << 10,
		BaseContext:       func(net.Listener) context.Context { return base },
		ErrorLog:          nil,
	}
	done := make(chan struct{})
	s.mu.Lock()
	s.cfg, s.http, s.ln, s.stop, s.done, s.lastErr, s.served = cfg, srv, ln, cancel, done, "", 0
	s.mu.Unlock()
	s.signal()
	go func() {
		defer close(done)
		err := srv.Serve(ln)
		if err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.mu.Lock()
			s.lastErr = err.Error()
			s.mu.Unlock()
		}
	}()
}

// Stop closes the listener, cancels the requests in flight and waits
// (briefly) for their handlers.
func (s *Server) Stop() error {
	s.mu.Lock()
	srv, stop, done := s.http, s.stop, s.done
	s.http, s.ln, s.stop, s.done = nil, nil, nil, nil
	s.mu.Unlock()
	if srv == nil {
		return nil
	}
	stop()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	err := srv.Shutdown(ctx)
	if err != nil {
		err = srv.Close()
	}
	<-done
	s.signal()
	return err
}

// Serve runs the server until ctx is cancelled (`churon serve`).
func (s *Server) Serve(ctx context.Context, cfg Config) error {
	if err := s.Start(cfg); err != nil {
		return err
	}
	s.mu.Lock()
	done := s.done
	s.mu.Unlock()
	select {
	case <-ctx.Done():
		return s.Stop()
	case <-done:
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.lastErr != "" {
			return fmt.Errorf("serve: %s", s.lastErr)
		}
		return nil
	}
}

// Status says whether the server is on, where, and what it answers.
func (s *Server) Status() Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := Status{On: s.http != nil, Served: s.served, Err: s.lastErr, Log: append([]LogEntry(nil), s.log...)}
	if s.ln != nil {
		st.Addr = s.ln.Addr().String()
		st.URL = "http://" + st.Addr + "/v1"
	}
	for _, id := range s.order {
		st.Active = append(st.Active, *s.active[id])
	}
	return st
}

// Changed is signalled when Status changes.
func (s *Server) Changed() <-chan struct{} { return s.changed }

func (s *Server) signal() {
	select {
	case s.changed <- struct{}{}:
	default:
	}
}

// begin records a request being answered.
func (s *Server) begin(info RequestInfo) {
	s.mu.Lock()
	s.active[info.ID] = &info
	s.order = append(s.order, info.ID)
	s.mu.Unlock()
	s.signal()
}

// progress records the tokens a request has generated so far.
func (s *Server) progress(id string, tokens int) {
	s.mu.Lock()
	if r := s.active[id]; r != nil {
		r.Tokens = tokens
	}
	s.mu.Unlock()
}

// end records a request's end and, with Config.Log, its record.
func (s *Server) end(id string, e LogEntry, logged bool) {
	s.mu.Lock()
	if _, ok := s.active[id]; ok {
		delete(s.active, id)
		for i, x := range s.order {
			if x == id {
				s.order = append(s.order[:i], s.order[i+1:]...)
				break
			}
		}
		s.served++
	}
	if logged {
		s.log = append(s.log, e)
		if len(s.log) > apiserve.LogKept {
			s.log = s.log[len(s.log)-apiserve.LogKept:]
		}
	}
	out := s.opt.LogOutput
	s.mu.Unlock()
	if logged && out != nil {
		fmt.Fprintln(out, FormatLog(e))
	}
	s.signal()
}

// FormatLog is a request's record on one line.
func FormatLog(e LogEntry) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s %s %d", e.Time.Format("15:04:05"), e.Client, e.Path, e.Status)
	if e.Model != "" {
		fmt.Fprintf(&b, " model=%s", e.Model)
	}
	if e.PromptTokens > 0 || e.CompletionTokens > 0 {
		fmt.Fprintf(&b, " in=%d cached=%d out=%d", e.PromptTokens, e.CachedTokens, e.CompletionTokens)
	}
	if e.TTFT > 0 {
		fmt.Fprintf(&b, " ttft=%dms", e.TTFT.Milliseconds())
	}
	if e.TokensPerSecond > 0 {
		fmt.Fprintf(&b, " %.1f tok/s", e.TokensPerSecond)
	}
	fmt.Fprintf(&b, " took=%dms", e.Took.Milliseconds())
	if e.Finish != "" {
		fmt.Fprintf(&b, " finish=%s", e.Finish)
	}
	if e.Err != "" {
		fmt.Fprintf(&b, " error=%q", e.Err)
	}
	return b.String()
}

func newID(prefix string) string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}
