package download

import (
	"errors"
	"fmt"
	"net"
	"syscall"
	"time"

	"github.com/churon/churon/internal/httpfile"
	"github.com/churon/churon/internal/units"
)

// Sentinel errors; the UI picks its message with errors.Is.
var (
	// ErrCanceled: Cancel was called; the partial data is gone.
	ErrCanceled = errors.New("download: canceled")
	// ErrChecksum: the finished file's SHA-256 is not the expected one.
	// Nothing is kept. The error is a *ChecksumError.
	ErrChecksum = errors.New("download: SHA-256 mismatch")
	// ErrInsufficientSpace: the destination disk has too little room. The
	// error is a *SpaceError.
	ErrInsufficientSpace = errors.New("download: not enough free disk space")
	// ErrDiskFull: a write failed because the disk filled up. The partial
	// data is kept, so the download resumes once space is freed.
	ErrDiskFull = errors.New("download: disk full")
	// ErrExists: the destination already exists and could not be shown to
	// be the requested file.
	ErrExists = errors.New("download: destination already exists")
	// ErrSizeMismatch: the server's size differs from the expected one.
	ErrSizeMismatch = errors.New("download: size differs from the expected size")
	// ErrUnauthorized: the server wants credentials (a gated repository
	// needs an access token) or refused the ones given.
	ErrUnauthorized = errors.New("download: access denied (the model may need an access token)")
	// ErrNotFound: the server has no such file.
	ErrNotFound = errors.New("download: not found")
	// ErrHTTP: any other failed response. The error is an *HTTPError.
	ErrHTTP = errors.New("download: HTTP error")
	// ErrGaveUp: too many attempts failed without progress.
	ErrGaveUp = errors.New("download: giving up after repeated failures")
	// ErrRemoteChanged: the file on the server changed during the download
	// (or the server stopped honouring ranges) and restarting did not help.
	ErrRemoteChanged = errors.New("download: the file on the server changed")
	// ErrClosed: the Manager is closed.
	ErrClosed = errors.New("download: manager closed")
	// ErrUnreachable: the server's name does not resolve, or nothing
	// listens at its address. Such a failure is not retried: on a machine
	// that is offline it does not go away within a download's retries,
	// and waiting on it only freezes the progress. The error is an
	// *UnreachableError.
	ErrUnreachable = errors.New("download: cannot reach the server")
)

// Internal control errors: how the fetch loop (fetch.go) tells the
// download's run (download.go) to restart, pause or try again.
var (
	errRestart   = errors.New("the server's answer no longer matches the partial data")
	errPaused    = errors.New("paused")
	errStalled   = errors.New("no data received within the stall timeout")
	errShortBody = errors.New("connection ended before the range was complete")
)

// retryable marks an error worth another attempt, after at least wait.
type retryable struct {
	err  error
	wait time.Duration // from Retry-After; 0: use the backoff
}

func (r *retryable) Error() string { return r.err.Error() }
func (r *retryable) Unwrap() error { return r.err }

// UnreachableError says which host could not be reached, and why (a
// *net.DNSError, or a refused connection: errors.As and errors.Is see
// through it).
type UnreachableError struct {
	Host string
	Err  error
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("download: cannot reach %s: %v", e.Host, e.Err)
}

func (e *UnreachableError) Unwrap() error { return e.Err }

func (e *UnreachableError) Is(target error) bool { return target == ErrUnreachable }

// unreachable reports whether a failed request never reached a server
// that could answer: a name that does not resolve (however the resolver
// failed: on a dead network every lookup fails), a refused connection, or
// no route to the host.
func unreachable(err error) bool {
	var dns *net.DNSError
	return errors.As(err, &dns) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.ENETUNREACH) || errors.Is(err, syscall.EHOSTUNREACH)
}

// ChecksumError reports a SHA-256 mismatch.
type ChecksumError struct {
	Path          string
	Expected, Got string
}

func (e *ChecksumError) Error() string {
	return fmt.Sprintf("download: %s: SHA-256 mismatch: expected %s, got %s (the downloaded data was discarded)", e.Path, e.Expected, e.Got)
}

func (e *ChecksumError) Is(target error) bool { return target == ErrChecksum }

// SpaceError reports a failed free-space check.
type SpaceError struct {
	Dir             string
	Need, Available int64 // bytes; Need includes the safety margin
}

func (e *SpaceError) Error() string {
	return fmt.Sprintf("download: not enough free disk space in %s: need %s (including a safety margin), %s available",
		e.Dir, FormatBytes(e.Need), FormatBytes(e.Available))
}

func (e *SpaceError) Is(target error) bool { return target == ErrInsufficientSpace }

// HTTPError is an unexpected HTTP status.
type HTTPError struct {
	URL    string
	Status int
}

func (e *HTTPError) Error() string {
	return fmt.Sprintf("download: %s: HTTP %d", httpfile.Redact(e.URL), e.Status)
}

func (e *HTTPError) Is(target error) bool { return target == ErrHTTP }

// FormatBytes writes a byte count in binary units ("1.5 GiB"); it is
// units.Bytes, offered here for the package's users.
func FormatBytes(n int64) string { return units.Bytes(n) }
