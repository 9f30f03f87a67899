package openai

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// The kinds of failure, for errors.Is: every error the client returns
// about a request is an *Error that matches one of them.
var (
	// ErrUnreachable: nothing answered at the address (refused, no route,
	// a name that does not resolve).
	ErrUnreachable = errors.New("openai: server unreachable")
	// ErrTLS: the server's certificate is not trusted (self-signed,
	// expired, another name), or it does not speak TLS.
	ErrTLS = errors.New("openai: TLS failed")
	// ErrTimeout: the server took too long to answer at all (no response
	// headers within Config.FirstByte).
	ErrTimeout = errors.New("openai: no answer in time")
	// ErrUnauthorized: 401 or 403 — the API key is missing, wrong or not
	// allowed this model.
	ErrUnauthorized = errors.New("openai: not authorized")
	// ErrNotFound: 404 — no such model (or no such endpoint: the URL does
	// not lead to an OpenAI-compatible API).
	ErrNotFound = errors.New("openai: not found")
	// ErrRateLimited: 429 — too many requests; Error.RetryAfter says when
	// the server said to try again.
	ErrRateLimited = errors.New("openai: rate limited")
	// ErrServer: a 5xx, or an error the server reported inside a stream.
	ErrServer = errors.New("openai: server error")
	// ErrRequest: another 4xx: the server refused the request itself.
	ErrRequest = errors.New("openai: request refused")
	// ErrBadResponse: what came back is not the API's JSON.
	ErrBadResponse = errors.New("openai: unreadable response")
	// ErrStreamCut: the stream ended before the answer did (the
	// connection dropped, the server died).
	ErrStreamCut = errors.New("openai: stream cut")
	// ErrStalled: the stream stopped sending for longer than
	// Config.Stall.
	ErrStalled = errors.New("openai: stream stalled")
)

// Error is a failed request: Kind is one of the sentinels above; Status
// the HTTP status (0 when none came); Message the server's own words
// (the API key masked), Host where it was sent; RetryAfter what a 429's
// or 503's Retry-After said (0: nothing). Err is the cause underneath.
//
// Error() is one line a person can act on: what happened, then what to
// do. It never holds the API key.
type Error struct {
	Kind       error
	Status     int
	Message    string
	Host       string
	Model      string
	RetryAfter time.Duration
	Err        error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.what())
	if e.Message != "" {
		fmt.Fprintf(&b, " (the server said: %s)", e.Message)
	} else if c := e.cause(); c != "" {
		fmt.Fprintf(&b, " (%s)", c)
	}
	if todo := e.todo(); todo != "" {
		b.WriteString(": ")
		b.WriteString(todo)
	}
	return b.String()
}

func (e *Error) what() string {
	at := e.Host
	if at == "" {
		at = "the server"
	}
	switch e.Kind {
	case ErrUnreachable:
		return "cannot reach " + at
	case ErrTLS:
		return "the secure connection to " + at + " failed"
	case ErrTimeout:
		return at + " did not answer in time"
	case ErrUnauthorized:
		return fmt.Sprintf("%s refused the API key (%d)", at, e.Status)
	case ErrNotFound:
		if e.Model != "" {
			return fmt.Sprintf("%s does not serve the model %q (404)", at, e.Model)
		}
		return at + " has no OpenAI-compatible API at this address (404)"
	case ErrRateLimited:
		return at + " is rate limiting requests (429)"
	case ErrServer:
		if e.Status > 0 {
			return fmt.Sprintf("%s failed (%d)", at, e.Status)
		}
		return at + " reported an error"
	case ErrRequest:
		return fmt.Sprintf("%s refused the request (%d)", at, e.Status)
	case ErrBadResponse:
		return at + " sent something that is not the OpenAI API's JSON"
	case ErrStreamCut:
		return "the answer from " + at + " was cut off"
	case ErrStalled:
		return at + " stopped sending in the middle of the answer"
	}
	return "the request to " + at + " failed"
}

func (e *Error) todo() string {
	switch e.Kind {
	case ErrUnreachable:
		return "check that the server is running and the address and port are right"
	case ErrTLS:
		if e.Err != nil && strings.Contains(e.Err.Error(), "certificate") {
			return "its certificate is not trusted; use http:// if it has no TLS, or trust its certificate in the connection's settings"
		}
		return "check the address (http:// or https://)"
	case ErrTimeout:
		return "it may be busy or loading the model; try again, or raise the connection's timeout"
	case ErrUnauthorized:
		return "check the API key in the connection's settings"
	case ErrNotFound:
		if e.Model != "" {
			return "choose another model (refresh the connection's list)"
		}
		return "check the base URL (it usually ends in /v1)"
	case ErrRateLimited:
		if e.RetryAfter > 0 {
			return "try again in " + e.RetryAfter.Round(time.Second).String()
		}
		return "wait a little and try again"
	case ErrServer:
		if e.Status > 0 {
			return "try again; if it keeps failing, the server's log says why"
		}
		return "what arrived is kept; try again"
	case ErrStreamCut, ErrStalled:
		return "what arrived is kept; try again"
	case ErrBadResponse:
		return "check that the address is an OpenAI-compatible API"
	}
	return ""
}

// cause is the last clause of the network error underneath ("connection
// refused", "certificate signed by unknown authority"), without the URL.
func (e *Error) cause() string {
	if e.Err == nil {
		return ""
	}
	switch e.Kind {
	case ErrUnreachable, ErrTLS, ErrStreamCut:
	default:
		return ""
	}
	s := e.Err.Error()
	if i := strings.LastIndex(s, ": "); i >= 0 {
		s = s[i+2:]
	}
	return mask(s, "")
}

// Is matches the error's kind.
func (e *Error) Is(target error) bool { return target == e.Kind }

// Unwrap is the cause underneath.
func (e *Error) Unwrap() error { return e.Err }

// Retryable says whether trying the same request again may work.
func Retryable(err error) bool {
	for _, k := range []error{ErrUnreachable, ErrTimeout, ErrRateLimited, ErrServer, ErrStreamCut, ErrStalled} {
		if errors.Is(err, k) {
			return true
		}
	}
	return false
}

// mask replaces every occurrence of key in s (and of its last eight
// characters, as OpenAI's messages quote a key: "sk-…abcd1234") with
// "***", and bounds s to one line of at most 300 bytes.
func mask(s, key string) string {
	if key != "" {
		s = strings.ReplaceAll(s, key, "***")
		if len(key) >= 12 {
			s = strings.ReplaceAll(s, key[len(key)-8:], "***")
		}
	}
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 300 {
		cut := 300
		for cut > 0 && s[cut]&0xC0 == 0x80 {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}
