package engine

import (
	"errors"
	"fmt"
)

// How reading a snapshot fails. What a store does next depends on the
// kind: a corrupt or mismatched file is deleted and the tokens prefilled,
// a torn final segment is dropped (the state before it is restored), and
// any other error (a failing disk) leaves the file alone.

// corrupt is an error wrapping ErrSnapshotCorrupt with the reason.
func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrSnapshotCorrupt, fmt.Sprintf(format, args...))
}

// mismatch is an error wrapping ErrSnapshotMismatch with the reason.
func mismatch(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrSnapshotMismatch, fmt.Sprintf(format, args...))
}

// shortError is a read that found the end of the data first: corrupt,
// unless it is in the last segment (a torn append).
type shortError struct {
	off  int64 // where the data ended
	got  int   // bytes of this read that were there
	what string
}

func (e *shortError) Error() string {
	return fmt.Sprintf("%v: truncated at byte %d, in the %s", ErrSnapshotCorrupt, e.off, e.what)
}

func (e *shortError) Unwrap() error { return ErrSnapshotCorrupt }

// tornError is a final segment that is short or fails its checksum with
// nothing after it.
type tornError struct{ err error }

func (e *tornError) Error() string { return e.err.Error() }
func (e *tornError) Unwrap() error { return e.err }

// tornIfShort makes a short read inside a segment a torn segment; other
// errors stay as they are.
func tornIfShort(err error) error {
	var short *shortError
	if errors.As(err, &short) {
		return &tornError{err}
	}
	return err
}
