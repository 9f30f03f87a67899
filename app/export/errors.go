package export

import "errors"

var (
	// ErrFormat is returned for a format name the package does not know.
	ErrFormat = errors.New("export: unknown format")
	// ErrMalformed is returned by Decode and Import for a file that is not
	// a Churon chat export: not JSON, not an object with "version" and
	// "conversations", or a field of the wrong type or value.
	ErrMalformed = errors.New("export: not a valid Churon chat export")
	// ErrVersion is returned by Decode and Import for a file written in a
	// newer version of the format than this build reads.
	ErrVersion = errors.New("export: the file was written by a newer Churon")
)
