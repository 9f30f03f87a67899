package metal

import (
	_ "embed"

	"github.com/churon/churon/engine/quant"
)

// kernelSource is the MSL of every kernel, compiled by Metal when the
// device opens.
//
//go:embed kernels.metal
var kernelSource string

// kernel names a kernel of kernels.metal; the runner makes a pipeline of
// each when the device opens, and a source without one of them fails it.
type kernel int

const (
	kQuantizeQ8_0 kernel = iota
	kQuantizeQ8_1
	kQuantizeQ8_K
	kRoundF16
	kRoundBF16
	kMmvQ4_0
	kMmvQ4_1
	kMmvQ5_0
	kMmvQ5_1
	kMmvQ8_0
	kMmvQ4_K
	kMmvQ5_K
	kMmvQ6_K
	kMmvF32
	kMmvF16
	kMmvBF16
	kMmqQ4_0
	kMmqQ4_1
	kMmqQ5_0
	kMmqQ5_1
	kMmqQ8_0
	kMmqQ4_K
	kMmqQ5_K
	kMmqQ6_K
	kMmqF32
	kMmqF16
	kMmqBF16
	kRMSNorm
	kRope
	kStoreKVF16
	kStoreKVF32
	kStoreKVQ8_0
	kAttendF16
	kAttendF32
	kAttendQ8_0
	kSwiGLU
	kGeGLU
	kSwiGLUClamped
	kAdd
	kAddBias
	kScale
	kSoftCap
	kCopyWords
	kFillWords
	kCopyRows
	kGatherRows
	kScatterAddRows
	numKernels
)

var kernelNames = [numKernels]string{
	kQuantizeQ8_0: "quantize_q8_0", kQuantizeQ8_1: "quantize_q8_1", kQuantizeQ8_K: "quantize_q8_k",
	kRoundF16: "round_f16", kRoundBF16: "round_bf16",
	kMmvQ4_0: "mmv_q4_0", kMmvQ4_1: "mmv_q4_1", kMmvQ5_0: "mmv_q5_0", kMmvQ5_1: "mmv_q5_1", kMmvQ8_0: "mmv_q8_0",
	kMmvQ4_K: "mmv_q4_k", kMmvQ5_K: "mmv_q5_k", kMmvQ6_K: "mmv_q6_k",
	kMmvF32: "mmv_f32", kMmvF16: "mmv_f16", kMmvBF16: "mmv_bf16",
	kMmqQ4_0: "mmq_q4_0", kMmqQ4_1: "mmq_q4_1", kMmqQ5_0: "mmq_q5_0", kMmqQ5_1: "mmq_q5_1", kMmqQ8_0: "mmq_q8_0",
	kMmqQ4_K: "mmq_q4_k", kMmqQ5_K: "mmq_q5_k", kMmqQ6_K: "mmq_q6_k",
	kMmqF32: "mmq_f32", kMmqF16: "mmq_f16", kMmqBF16: "mmq_bf16",
	kRMSNorm: "rms_norm", kRope: "rope",
	kStoreKVF16: "store_kv_f16", kStoreKVF32: "store_kv_f32", kStoreKVQ8_0: "store_kv_q8_0",
	kAttendF16: "attend_f16", kAttendF32: "attend_f32", kAttendQ8_0: "attend_q8_0",
	kSwiGLU: "swiglu", kGeGLU: "geglu", kSwiGLUClamped: "swiglu_clamped",
	kAdd: "add", kAddBias: "add_bias", kScale: "scale", kSoftCap: "soft_cap",
	kCopyWords: "copy_words", kFillWords: "fill_words",
	kCopyRows: "copy_rows", kGatherRows: "gather_rows", kScatterAddRows: "scatter_add_rows",
}

// matmulKernels are the matrix-vector (up to mmvMaxRows input rows) and
// tiled kernels of each weight type the device multiplies.
var matmulKernels = map[quant.Type][2]kernel{
	quant.Q4_0: {kMmvQ4_0, kMmqQ4_0}, quant.Q4_1: {kMmvQ4_1, kMmqQ4_1},
	quant.Q5_0: {kMmvQ5_0, kMmqQ5_0}, quant.Q5_1: {kMmvQ5_1, kMmqQ5_1},
	quant.Q8_0: {kMmvQ8_0, kMmqQ8_0},
	quant.Q4_K: {kMmvQ4_K, kMmqQ4_K}, quant.Q5_K: {kMmvQ5_K, kMmqQ5_K}, quant.Q6_K: {kMmvQ6_K, kMmqQ6_K},
	quant.F32: {kMmvF32, kMmqF32}, quant.F16: {kMmvF16, kMmqF16}, quant.BF16: {kMmvBF16, kMmqBF16},
}

// mmvMaxRows is the most input rows the matrix-vector kernels take: a
// decode step of up to eight sequences. More go through the tiled ones.
const mmvMaxRows = 8

// mmqTile is the tiled kernels' tile of weight rows and of input rows.
const mmqTile = 32
