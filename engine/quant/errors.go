package quant

import "errors"

var (
	// ErrUnsupported is returned for a type the operation cannot handle
	// (a known GGUF type this package has no code for, or an unknown one).
	ErrUnsupported = errors.New("unsupported tensor type")

	// ErrSize is returned when a buffer length does not fit the type: an
	// element count that is not a whole number of blocks, or a byte count
	// that is not exactly the row size of the element count.
	ErrSize = errors.New("buffer size does not match the block layout")
)
