package metal

import (
	_ "embed"

	"github.com/churon/churon/engine/backend/internal/gpucommon"
)

// kernelSource is the MSL of every kernel, compiled by Metal when the
// device opens.
//
//go:embed kernels.metal
var kernelSource string

// The kernels of kernels.metal are those CUDA's kernels.ptx has too
// (gpucommon.KernelNames), then these two: the copies of words that a
// CUDA stream makes with its own copies. The runner makes a pipeline of
// each when the device opens, and a source without one of them fails it.
const (
	kCopyWords = gpucommon.NumKernels + iota
	kFillWords
)

var kernelNames = append(gpucommon.KernelNames[:], "copy_words", "fill_words")

// mmqTile is the tiled kernels' tile of weight rows and of input rows.
const mmqTile = 32
