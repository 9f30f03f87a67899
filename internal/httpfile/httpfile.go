// Package httpfile holds what Churon's HTTP clients (the downloader, the
// remote fit check, the hub's API client) must do alike: name the program,
// keep URLs, which may be signed, out of error messages, and, when reading
// a model file, ask for the file's own bytes.
package httpfile

import (
	"context"
	"errors"
	"net/http"
	"net/url"
)

// UserAgent is how Churon names itself to servers.
const UserAgent = "churon"

// NewGet returns a GET request for rawURL that asks for the file's bytes
// as stored: no compressed transfer, since byte offsets and ranges must
// be those of the file itself. authorize, when not nil, is applied last
// (e.g. hub.Client.Authorize, which adds a token for the hub's host
// only). The caller adds a Range header when it wants part of the file.
func NewGet(ctx context.Context, rawURL string, authorize func(*http.Request)) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept-Encoding", "identity")
	req.Header.Set("User-Agent", UserAgent)
	if authorize != nil {
		authorize(req)
	}
	return req, nil
}

// Cause returns the cause of a *url.Error (what the HTTP client returns),
// whose own message repeats the URL, query and all; any other error is
// returned as it is. Callers name the URL themselves, redacted.
func Cause(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) && ue.Err != nil {
		return ue.Err
	}
	return err
}

// Redact drops a URL's query, credentials and fragment, which may carry
// signed tokens, before it goes into an error message.
func Redact(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "(invalid URL)"
	}
	u.RawQuery, u.User, u.Fragment = "", nil, ""
	return u.String()
}
