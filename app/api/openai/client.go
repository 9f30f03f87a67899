package openai

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Config is where and how to reach an endpoint.
type Config struct {
	// BaseURL is the endpoint, with or without /v1 (NormalizeBaseURL).
	BaseURL string
	// APIKey, when set, is sent as "Authorization: Bearer KEY".
	APIKey string
	// FirstByte bounds the wait for a response's headers (a server that
	// is loading a model, or processing a long prompt before it streams);
	// 0 means DefaultFirstByte.
	FirstByte time.Duration
	// Stall bounds the silence inside a stream; 0 means DefaultStall.
	Stall time.Duration
	// RootCAs, when set, are the certificates trusted for https (a
	// self-signed server's, which the person chose to trust); nil means
	// the system's.
	RootCAs *x509.CertPool
	// Transport, for tests, replaces the HTTP transport.
	Transport http.RoundTripper
}

// Timeouts.
const (
	DefaultFirstByte = 5 * time.Minute
	DefaultStall     = 2 * time.Minute
	dialTimeout      = 10 * time.Second
	maxBody          = 16 << 20 // a non-streamed response
)

// Client talks to one endpoint. It is safe for concurrent use.
type Client struct {
	base  *url.URL
	key   string
	cfg   Config
	http  *http.Client
	stall time.Duration
}

// ErrBadURL: the base URL is not an http or https URL.
var ErrBadURL = errors.New("openai: bad base URL")

// NormalizeBaseURL returns the endpoint's base as the client uses it:
// http or https, no query, fragment or trailing slash, ending in /v1 once
// (added when missing, never doubled: "host:8080", "http://host:8080/",
// "http://host:8080/v1/" and "http://host:8080/v1/chat/completions" all
// give "http://host:8080/v1"). A URL without a scheme gets http://.
// Credentials in the URL are refused: the key has its own place.
func NormalizeBaseURL(raw string) (string, error) {
	s := strings.TrimSpace(raw)
	if s == "" {
		return "", fmt.Errorf("%w: empty", ErrBadURL)
	}
	if !strings.Contains(s, "://") {
		s = "http://" + s
	}
	u, err := url.Parse(s)
	if err != nil {
		return "", fmt.Errorf("%w: %q: %v", ErrBadURL, raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", fmt.Errorf("%w: %q: want http:// or https://", ErrBadURL, raw)
	}
	if u.Host == "" {
		return "", fmt.Errorf("%w: %q: no host", ErrBadURL, raw)
	}
	if u.User != nil {
		return "", fmt.Errorf("%w: a user or password in the URL (give the API key as the key instead)", ErrBadURL)
	}
	p := strings.TrimRight(u.Path, "/")
	for _, tail := range []string{"/chat/completions", "/completions", "/models"} {
		p = strings.TrimSuffix(p, tail)
	}
	p = strings.TrimRight(p, "/")
	if !strings.HasSuffix(p, "/v1") {
		p += "/v1"
	}
	u.Path, u.RawPath, u.RawQuery, u.Fragment = p, "", "", ""
	return u.String(), nil
}

// NewClient makes a client of the endpoint cfg names.
func NewClient(cfg Config) (*Client, error) {
	base, err := NormalizeBaseURL(cfg.BaseURL)
	if err != nil {
		return nil, err
	}
	u, _ := url.Parse(base)
	if cfg.FirstByte <= 0 {
		cfg.FirstByte = DefaultFirstByte
	}
	stall := cfg.Stall
	if stall <= 0 {
		stall = DefaultStall
	}
	tr := cfg.Transport
	if tr == nil {
		t := &http.Transport{
			Proxy:                 http.ProxyFromEnvironment,
			DialContext:           (&net.Dialer{Timeout: dialTimeout, KeepAlive: 30 * time.Second}).DialContext,
			TLSHandshakeTimeout:   dialTimeout,
			ResponseHeaderTimeout: cfg.FirstByte,
			IdleConnTimeout:       90 * time.Second,
			MaxIdleConnsPerHost:   4,
			ForceAttemptHTTP2:     true,
		}
		if cfg.RootCAs != nil {
			t.TLSClientConfig = &tls.Config{RootCAs: cfg.RootCAs, MinVersion: tls.VersionTLS12}
		}
		tr = t
	}
	return &Client{base: u, key: strings.TrimSpace(cfg.APIKey), cfg: cfg, stall: stall,
		http: &http.Client{Transport: tr, CheckRedirect: noKeyAcrossHosts}}, nil
}

// noKeyAcrossHosts follows redirects on the same host only: the key must
// not travel to another.
func noKeyAcrossHosts(req *http.Request, via []*http.Request) error {
	if len(via) >= 5 {
		return errors.New("too many redirects")
	}
	if req.URL.Host != via[0].URL.Host {
		return fmt.Errorf("redirected to another host (%s): not followed", req.URL.Host)
	}
	return nil
}

// BaseURL is the normalised base the client sends to.
func (c *Client) BaseURL() string { return c.base.String() }

// Models lists what the endpoint serves (GET /v1/models).
func (c *Client) Models(ctx context.Context) ([]Model, error) {
	resp, err := c.do(ctx, http.MethodGet, "/models", nil, "")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var list ModelList
	if err := c.decode(resp, &list); err != nil {
		return nil, err
	}
	return list.Data, nil
}

// Chat sends a request and waits for the whole answer (stream false).
func (c *Client) Chat(ctx context.Context, req ChatRequest) (ChatChunk, error) {
	req.Stream, req.StreamOptions = false, nil
	body, err := json.Marshal(req)
	if err != nil {
		return ChatChunk{}, fmt.Errorf("openai: encode request: %w", err)
	}
	resp, err := c.do(ctx, http.MethodPost, "/chat/completions", body, req.Model)
	if err != nil {
		return ChatChunk{}, err
	}
	defer resp.Body.Close()
	var out ChatChunk
	if err := c.decode(resp, &out); err != nil {
		return ChatChunk{}, err
	}
	if out.Error != nil {
		return ChatChunk{}, c.errorf(ErrServer, 0, req.Model, out.Error.Message, nil)
	}
	return out, nil
}

// ChatStream sends a request with stream true (and include_usage) and
// returns the stream once the server has answered with 200; any other
// answer is an *Error.
func (c *Client) ChatStream(ctx context.Context, req ChatRequest) (*Stream, error) {
	req.Stream = true
	req.StreamOptions = &StreamOptions{IncludeUsage: true}
	body, err := json.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("openai: encode request: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	resp, err := c.do(ctx, http.MethodPost, "/chat/completions", body, req.Model)
	if err != nil {
		cancel()
		return nil, err
	}
	s := &Stream{c: c, model: req.Model, ctx: ctx, cancel: cancel, resp: resp}
	s.watch = time.AfterFunc(c.stall, s.stalled)
	s.sse = NewSSEReader(&activity{r: resp.Body, s: s}, 0)
	return s, nil
}

// do sends a request and returns a 2xx response; any other status is
// read into an *Error.
func (c *Client) do(ctx context.Context, method, path string, body []byte, model string) (*http.Response, error) {
	u := *c.base
	u.Path += path
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), rd)
	if err != nil {
		return nil, fmt.Errorf("openai: %w", err)
	}
	req.Header.Set("Accept", "application/json, text/event-stream")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.key != "" {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, c.netError(ctx, err, model)
	}
	if resp.StatusCode/100 == 2 {
		return resp, nil
	}
	defer resp.Body.Close()
	return nil, c.statusError(resp, model)
}

// netError classifies a transport failure.
func (c *Client) netError(ctx context.Context, err error, model string) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	var cert *tls.CertificateVerificationError
	var unknown x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	var invalid x509.CertificateInvalidError
	var rec tls.RecordHeaderError
	switch {
	case errors.As(err, &cert), errors.As(err, &unknown), errors.As(err, &hostErr), errors.As(err, &invalid), errors.As(err, &rec),
		strings.Contains(err.Error(), "tls: "), strings.Contains(err.Error(), "server gave HTTP response to HTTPS client"):
		return c.errorf(ErrTLS, 0, model, "", err)
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		var op *net.OpError
		if errors.As(err, &op) && op.Op == "dial" {
			return c.errorf(ErrUnreachable, 0, model, "", err)
		}
		return c.errorf(ErrTimeout, 0, model, "", err)
	}
	if strings.Contains(err.Error(), "timeout awaiting response headers") {
		return c.errorf(ErrTimeout, 0, model, "", err)
	}
	var op *net.OpError
	var dns *net.DNSError
	if errors.As(err, &op) || errors.As(err, &dns) {
		return c.errorf(ErrUnreachable, 0, model, "", err)
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return c.errorf(ErrStreamCut, 0, model, "", err)
	}
	return c.errorf(ErrUnreachable, 0, model, "", err)
}

// statusError reads a non-2xx response into an *Error.
func (c *Client) statusError(resp *http.Response, model string) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	msg := ""
	var body struct {
		Error  *ErrorBody `json:"error"`
		Detail any        `json:"detail"` // FastAPI's (vLLM's router) shape
		Msg    string     `json:"message"`
	}
	if json.Unmarshal(b, &body) == nil {
		switch {
		case body.Error != nil:
			msg = body.Error.Message
		case body.Msg != "":
			msg = body.Msg
		case body.Detail != nil:
			msg = fmt.Sprint(body.Detail)
		}
	} else if ct := resp.Header.Get("Content-Type"); !strings.Contains(ct, "html") {
		msg = string(b)
	}
	kind := ErrRequest
	switch s := resp.StatusCode; {
	case s == http.StatusUnauthorized || s == http.StatusForbidden:
		kind = ErrUnauthorized
	case s == http.StatusNotFound:
		kind = ErrNotFound
	case s == http.StatusTooManyRequests:
		kind = ErrRateLimited
	case s >= 500:
		kind = ErrServer
	case s == http.StatusBadRequest && model != "" && mentionsModel(msg, model):
		// Ollama and vLLM answer 400 or 404 for a model they lack.
		kind = ErrNotFound
	}
	e := c.errorf(kind, resp.StatusCode, model, msg, nil).(*Error)
	if kind == ErrNotFound && model == "" {
		e.Model = ""
	}
	e.RetryAfter = retryAfter(resp.Header.Get("Retry-After"), time.Now())
	return e
}

func mentionsModel(msg, model string) bool {
	m := strings.ToLower(msg)
	return strings.Contains(m, "model") && (strings.Contains(m, "not found") || strings.Contains(m, "does not exist"))
}

// retryAfter reads a Retry-After header: seconds, or an HTTP date.
func retryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if n, err := strconv.Atoi(v); err == nil && n >= 0 {
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// decode reads a JSON response.
func (c *Client) decode(resp *http.Response, v any) error {
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return c.netError(resp.Request.Context(), err, "")
	}
	if err := json.Unmarshal(b, v); err != nil {
		return c.errorf(ErrBadResponse, resp.StatusCode, "", "", err)
	}
	return nil
}

func (c *Client) errorf(kind error, status int, model, msg string, cause error) error {
	return &Error{Kind: kind, Status: status, Host: c.base.Host, Model: model, Message: mask(msg, c.key), Err: cause}
}

// Stream is a streamed chat completion. Next returns its chunks; Close
// ends it (and cancels the request) at any time.
type Stream struct {
	c      *Client
	model  string
	ctx    context.Context
	cancel context.CancelFunc
	resp   *http.Response
	sse    *SSEReader
	watch  *time.Timer

	mu      sync.Mutex
	stall   bool // the watch fired
	usage   *Usage
	timings *Timings
	finish  string
	done    bool
	err     error
}

// activity resets the stall watch at every byte the server sends.
type activity struct {
	r io.Reader
	s *Stream
}

func (a *activity) Read(p []byte) (int, error) {
	n, err := a.r.Read(p)
	if n > 0 {
		a.s.watch.Reset(a.s.c.stall)
	}
	return n, err
}

func (s *Stream) stalled() {
	s.mu.Lock()
	s.stall = true
	s.mu.Unlock()
	s.cancel()
}

// Next returns the next chunk that carries something (text, reasoning,
// logprobs, a finish reason or usage). It returns io.EOF once the server
// has ended the stream properly ("data: [DONE]", or the body's end after
// a finish reason); an answer that stops before either is ErrStreamCut,
// one that goes silent ErrStalled, and an error event ErrServer. A
// cancelled context is its error, as is.
func (s *Stream) Next() (ChatChunk, error) {
	if s.done {
		return ChatChunk{}, s.endErr()
	}
	for {
		ev, err := s.sse.Next()
		if err != nil {
			return ChatChunk{}, s.fail(s.readError(err))
		}
		data := strings.TrimSpace(ev.Data)
		if data == "[DONE]" {
			return ChatChunk{}, s.fail(io.EOF)
		}
		if ev.Type == "error" { // the standard's named event, as some proxies send
			return ChatChunk{}, s.fail(s.c.errorf(ErrServer, 0, s.model, errorText(data), nil))
		}
		if ev.Type != "" && ev.Type != "message" {
			continue // an event type Churon does not know (e.g. "ping")
		}
		var ch ChatChunk
		if err := json.Unmarshal([]byte(data), &ch); err != nil {
			return ChatChunk{}, s.fail(s.c.errorf(ErrBadResponse, 0, s.model, "", fmt.Errorf("event %.80q: %w", data, err)))
		}
		if ch.Error != nil {
			return ChatChunk{}, s.fail(s.c.errorf(ErrServer, 0, s.model, ch.Error.Message, nil))
		}
		if ch.Object == "error" {
			return ChatChunk{}, s.fail(s.c.errorf(ErrServer, 0, s.model, ch.Message, nil))
		}
		if ch.Usage != nil {
			u := *ch.Usage
			s.usage = &u
		}
		if ch.Timings != nil {
			tm := *ch.Timings
			s.timings = &tm
		}
		if f := ch.Finish(); f != "" {
			s.finish = f
		}
		if len(ch.Choices) == 0 && ch.Usage == nil {
			continue
		}
		return ch, nil
	}
}

// errorText is an error event's message: its JSON's, or the data as is.
func errorText(data string) string {
	var b struct {
		Error   *ErrorBody `json:"error"`
		Message string     `json:"message"`
	}
	if json.Unmarshal([]byte(data), &b) == nil {
		if b.Error != nil {
			return b.Error.Message
		}
		if b.Message != "" {
			return b.Message
		}
	}
	return data
}

// readError classifies the end of the body.
func (s *Stream) readError(err error) error {
	s.mu.Lock()
	stalled := s.stall
	s.mu.Unlock()
	switch {
	case stalled:
		return s.c.errorf(ErrStalled, 0, s.model, "", err)
	case s.ctx.Err() != nil:
		return s.ctx.Err()
	case errors.Is(err, io.EOF) && s.finish != "":
		// The answer ended (finish_reason) and the server closed without
		// [DONE], as some do: a proper end.
		return io.EOF
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return s.c.errorf(ErrStreamCut, 0, s.model, "", err)
	case errors.Is(err, ErrEventTooLong):
		return s.c.errorf(ErrBadResponse, 0, s.model, "", err)
	}
	return s.c.errorf(ErrStreamCut, 0, s.model, "", err)
}

func (s *Stream) fail(err error) error {
	s.done, s.err = true, err
	s.watch.Stop()
	if err == io.EOF {
		// Drain what a server sends after [DONE] (nothing, usually), so
		// the connection can be reused.
		_, _ = io.Copy(io.Discard, io.LimitReader(s.resp.Body, 4<<10))
	}
	return err
}

func (s *Stream) endErr() error { return s.err }

// Usage is what the server said the answer cost (its last chunk's
// usage), nil when it said nothing.
func (s *Stream) Usage() *Usage { return s.usage }

// Timings are the server's own measurements (llama-server's), nil when
// it sent none.
func (s *Stream) Timings() *Timings { return s.timings }

// FinishReason is why the answer ended ("stop", "length", …), "" until
// the server says.
func (s *Stream) FinishReason() string { return s.finish }

// Close ends the stream and frees its connection; it cancels the request
// if the answer is still streaming.
func (s *Stream) Close() error {
	s.watch.Stop()
	s.cancel()
	return s.resp.Body.Close()
}
