// Package serve is the local OpenAI-compatible API server as the window
// sees it: its configuration, its status and the Controller that starts
// and stops it, implemented by the serve package (a front end beside ui/
// and cli/, built over the session's API). The window never imports the
// server itself; desktop/ hands it a Controller.
package serve

import (
	"net"
	"strings"
	"time"
)

// DefaultAddr is where the server listens unless told otherwise: the
// loopback interface only, llama-server's port, so that clients set up for
// it work unchanged.
const DefaultAddr = "127.0.0.1:8080"

// Limits that keep one client from taking the machine, by default.
const (
	DefaultMaxBody        = 4 << 20 // bytes of a request body
	DefaultMaxMessages    = 1024    // messages of a chat request
	DefaultMaxTokens      = 8192    // max_tokens a request may ask for
	DefaultMaxConnections = 64      // requests in flight at once
)

// Config is how the server runs. The zero value (and DefaultAddr) is
// safe: loopback only, no key, no CORS, default limits, nothing stored.
type Config struct {
	// Addr is host:port to listen on ("" = DefaultAddr; port 0 picks a free
	// one). Any host but a loopback one needs an APIKey.
	Addr string
	// APIKey, when set, is required of every request as
	// "Authorization: Bearer KEY".
	APIKey string
	// CORSOrigins are the web origins allowed to call the API from a
	// browser ("*" for any); none means no CORS headers at all, so that a
	// web page the person visits cannot use the local model.
	CORSOrigins []string
	// Limits; 0 means the default above.
	MaxBody        int64
	MaxMessages    int
	MaxTokens      int
	MaxConnections int
	// Store keeps every request in the history, as a conversation (the
	// person's switch); off, requests leave only their KV cache.
	Store bool
	// Log records each request (model, tokens in and out, cached tokens,
	// TTFT, tokens/s) in Status.Log and on the controller's log output.
	Log bool
}

// Status is what the server is doing.
type Status struct {
	On   bool
	Addr string // where it listens, when on
	URL  string // its base URL, "http://ADDR/v1"
	// Active are the requests being answered now, oldest first.
	Active []RequestInfo
	// Served counts the requests answered since it started.
	Served int
	// Log holds the latest requests' records (with Config.Log), newest
	// last, at most LogKept.
	Log []LogEntry
	// Err says why it stopped or could not start ("" when none).
	Err string
}

// LogKept is how many records Status.Log keeps.
const LogKept = 100

// RequestInfo is a request being answered.
type RequestInfo struct {
	ID      string
	Path    string // "/v1/chat/completions", "/v1/completions"
	Client  string // the client's address
	Started time.Time
	Stream  bool
	// Tokens generated so far.
	Tokens int
}

// LogEntry is one request's record.
type LogEntry struct {
	Time   time.Time
	ID     string
	Path   string
	Client string
	Model  string
	Status int // the HTTP status
	// PromptTokens, CachedTokens of them reused, CompletionTokens generated.
	PromptTokens, CachedTokens, CompletionTokens int
	TTFT                                         time.Duration
	TokensPerSecond                              float64
	Took                                         time.Duration
	Finish                                       string // stop, length, cancelled, error
	Err                                          string
}

// Controller starts and stops the server and says what it does. Its
// methods are safe from any goroutine; Start and Stop may wait briefly
// for the listener, never for an answer.
type Controller interface {
	Start(cfg Config) error
	// Stop closes the listener and cancels the requests in flight.
	Stop() error
	Status() Status
	// Changed is signalled (without blocking, at most one pending) when
	// Status changes: a start or stop, a request begun or ended.
	Changed() <-chan struct{}
}

// IsLoopback reports whether addr's host is a loopback address
// ("localhost" included), where the server may listen without a key.
func IsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// The app settings (session.Service.Setting) the window keeps the server's
// configuration in; the desktop app reads them at start.
const (
	SettingEnabled = "serve.enabled" // "true": serve while the app runs
	SettingAddr    = "serve.addr"
	SettingAPIKey  = "serve.api_key"
	SettingCORS    = "serve.cors" // origins, comma-separated
	SettingStore   = "serve.store"
	SettingLog     = "serve.log"
)

// ConfigFrom reads the server's configuration from the app settings, and
// whether the person turned it on.
func ConfigFrom(setting func(key string) (string, bool)) (cfg Config, enabled bool) {
	get := func(k string) string { v, _ := setting(k); return strings.TrimSpace(v) }
	cfg.Addr = get(SettingAddr)
	cfg.APIKey = get(SettingAPIKey)
	for _, o := range strings.Split(get(SettingCORS), ",") {
		if o = strings.TrimSpace(o); o != "" {
			cfg.CORSOrigins = append(cfg.CORSOrigins, o)
		}
	}
	cfg.Store = get(SettingStore) == "true"
	cfg.Log = get(SettingLog) == "true"
	return cfg, get(SettingEnabled) == "true"
}
