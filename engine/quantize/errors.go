package quantize

import "errors"

var (
	// ErrUnknownType: the requested file type is not one File makes.
	ErrUnknownType = errors.New("unknown quantization type")
	// ErrRequantize: the source holds quantized weight matrices and
	// Options.AllowRequantize is not set.
	ErrRequantize = errors.New("source is already quantized")
	// ErrDiskFull: the output ran out of disk space. Nothing is left
	// behind: neither the output nor its temporary file.
	ErrDiskFull = errors.New("not enough disk space")
	// ErrNonFinite: a weight to convert is NaN or infinite, which no
	// quantized format can hold (llama.cpp refuses such tensors too).
	ErrNonFinite = errors.New("weights are not finite")
)
