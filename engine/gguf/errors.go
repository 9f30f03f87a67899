package gguf

import (
	"errors"
	"fmt"
)

// Sentinel errors. Every parse failure is a *FormatError whose Err is one of
// these, so callers pick their message with errors.Is and still get the
// details (what, where) from Error.
var (
	// ErrNotGGUF: the file does not start with the magic "GGUF".
	ErrNotGGUF = errors.New("not a GGUF file")
	// ErrTruncated: the file ends before the structure it declares.
	ErrTruncated = errors.New("truncated file")
	// ErrUnsupportedVersion: GGUF v1, a future version, or a big-endian file.
	ErrUnsupportedVersion = errors.New("unsupported GGUF version")
	// ErrBigEndian: the file was written big-endian. It also matches
	// ErrUnsupportedVersion.
	ErrBigEndian = fmt.Errorf("%w: big-endian GGUF", ErrUnsupportedVersion)
	// ErrInvalid: a structural rule is broken (bad alignment, duplicate key,
	// overlapping tensors, ...).
	ErrInvalid = errors.New("invalid GGUF")
	// ErrLimit: a length or count is larger than this reader accepts
	// (see the Max* constants) even though the file may hold that many bytes.
	ErrLimit = errors.New("GGUF limit exceeded")
	// ErrUnknownType: a tensor has a type number ggml does not define, or a
	// metadata value has an unknown value type.
	ErrUnknownType = errors.New("unknown type")
	// ErrNoData: the File was opened with OpenReader and holds no tensor data.
	ErrNoData = errors.New("gguf: file opened without tensor data")
	// ErrClosed: the File was closed.
	ErrClosed = errors.New("gguf: file is closed")
)

// FormatError describes what is wrong with a file and where.
// Its message is a single line: names are quoted with %q.
type FormatError struct {
	Offset int64  // byte offset in the file where the problem was found; -1 when not tied to one
	Where  string // the item being read: `header`, `key "general.name"`, `tensor "output.weight"`
	Msg    string // what is wrong
	Err    error  // one of the sentinels above
}

func (e *FormatError) Error() string {
	if e.Offset >= 0 {
		return fmt.Sprintf("gguf: %s at byte %d: %s", e.Where, e.Offset, e.Msg)
	}
	return fmt.Sprintf("gguf: %s: %s", e.Where, e.Msg)
}

func (e *FormatError) Unwrap() error { return e.Err }

// IncompleteError is the Err of a FormatError for a file shorter than its
// tensors need, as a download that stopped early is: it says how much is
// there and how much should be, so a front end can say "incomplete (412
// MiB of 470 MiB)". It matches ErrTruncated.
type IncompleteError struct {
	Size, Want int64 // bytes in the file, and bytes its tensors need
}

func (e *IncompleteError) Error() string {
	return fmt.Sprintf("%v: %d of %d bytes", ErrTruncated, e.Size, e.Want)
}

func (e *IncompleteError) Is(target error) bool { return target == ErrTruncated }
