package gpucommon

import (
	"fmt"
	"iter"

	"github.com/churon/churon/engine/backend"
	"github.com/churon/churon/engine/quant"
)

// Kernel names a kernel both GPU backends have, by the same name in
// kernels.ptx (CUDA) and kernels.metal: each backend looks every one up
// when its device opens, and a source without one of them fails it.
// Metal adds its own after NumKernels.
type Kernel int

const (
	KQuantizeQ8_0 Kernel = iota
	KQuantizeQ8_1
	KQuantizeQ8_K
	KRoundF16
	KRoundBF16
	KMmvQ4_0
	KMmvQ4_1
	KMmvQ5_0
	KMmvQ5_1
	KMmvQ8_0
	KMmvQ4_K
	KMmvQ5_K
	KMmvQ6_K
	KMmvF32
	KMmvF16
	KMmvBF16
	KMmqQ4_0
	KMmqQ4_1
	KMmqQ5_0
	KMmqQ5_1
	KMmqQ8_0
	KMmqQ4_K
	KMmqQ5_K
	KMmqQ6_K
	KMmqF32
	KMmqF16
	KMmqBF16
	KRMSNorm
	KRope
	KStoreKVF16
	KStoreKVF32
	KStoreKVQ8_0
	KAttendF16
	KAttendF32
	KAttendQ8_0
	KSwiGLU
	KGeGLU
	KSwiGLUClamped
	KAdd
	KAddBias
	KScale
	KSoftCap
	KCopyRows
	KGatherRows
	KScatterAddRows
	NumKernels
)

// KernelNames is each kernel's name in the sources.
var KernelNames = [NumKernels]string{
	KQuantizeQ8_0: "quantize_q8_0", KQuantizeQ8_1: "quantize_q8_1", KQuantizeQ8_K: "quantize_q8_k",
	KRoundF16: "round_f16", KRoundBF16: "round_bf16",
	KMmvQ4_0: "mmv_q4_0", KMmvQ4_1: "mmv_q4_1", KMmvQ5_0: "mmv_q5_0", KMmvQ5_1: "mmv_q5_1", KMmvQ8_0: "mmv_q8_0",
	KMmvQ4_K: "mmv_q4_k", KMmvQ5_K: "mmv_q5_k", KMmvQ6_K: "mmv_q6_k",
	KMmvF32: "mmv_f32", KMmvF16: "mmv_f16", KMmvBF16: "mmv_bf16",
	KMmqQ4_0: "mmq_q4_0", KMmqQ4_1: "mmq_q4_1", KMmqQ5_0: "mmq_q5_0", KMmqQ5_1: "mmq_q5_1", KMmqQ8_0: "mmq_q8_0",
	KMmqQ4_K: "mmq_q4_k", KMmqQ5_K: "mmq_q5_k", KMmqQ6_K: "mmq_q6_k",
	KMmqF32: "mmq_f32", KMmqF16: "mmq_f16", KMmqBF16: "mmq_bf16",
	KRMSNorm: "rms_norm", KRope: "rope",
	KStoreKVF16: "store_kv_f16", KStoreKVF32: "store_kv_f32", KStoreKVQ8_0: "store_kv_q8_0",
	KAttendF16: "attend_f16", KAttendF32: "attend_f32", KAttendQ8_0: "attend_q8_0",
	KSwiGLU: "swiglu", KGeGLU: "geglu", KSwiGLUClamped: "swiglu_clamped",
	KAdd: "add", KAddBias: "add_bias", KScale: "scale", KSoftCap: "soft_cap",
	KCopyRows: "copy_rows", KGatherRows: "gather_rows", KScatterAddRows: "scatter_add_rows",
}

// MatMulKernels are the matrix-vector (up to MMVMaxRows input rows) and
// tiled kernels of each weight type the devices multiply.
var MatMulKernels = map[quant.Type][2]Kernel{
	quant.Q4_0: {KMmvQ4_0, KMmqQ4_0}, quant.Q4_1: {KMmvQ4_1, KMmqQ4_1},
	quant.Q5_0: {KMmvQ5_0, KMmqQ5_0}, quant.Q5_1: {KMmvQ5_1, KMmqQ5_1},
	quant.Q8_0: {KMmvQ8_0, KMmqQ8_0},
	quant.Q4_K: {KMmvQ4_K, KMmqQ4_K}, quant.Q5_K: {KMmvQ5_K, KMmqQ5_K}, quant.Q6_K: {KMmvQ6_K, KMmqQ6_K},
	quant.F32: {KMmvF32, KMmqF32}, quant.F16: {KMmvF16, KMmqF16}, quant.BF16: {KMmvBF16, KMmqBF16},
}

// Supports says the devices multiply weights of type t.
func Supports(t quant.Type) bool {
	_, ok := MatMulKernels[t]
	return ok
}

// MMVMaxRows is the most input rows the matrix-vector kernels take: a
// decode step of up to eight sequences. More go through the tiled ones.
const MMVMaxRows = 8

// RoundKernel is the kernel that rounds n values to format a: for the
// block formats (ActQ8_0, ActQ8_1, ActQ8_K) also the number of blocks,
// each a SIMD group's (a warp's); 0 for the element-wise ones (F16, BF16).
func RoundKernel(a Act, n int) (k Kernel, blocks int) {
	switch a {
	case ActF16:
		return KRoundF16, 0
	case ActBF16:
		return KRoundBF16, 0
	}
	k = [...]Kernel{ActQ8_0: KQuantizeQ8_0, ActQ8_1: KQuantizeQ8_1, ActQ8_K: KQuantizeQ8_K}[a]
	return k, n / ActTypes[a].BlockSize()
}

// KVKernels are the kernels that store rows to, and attend over, a cache
// of type t (F16, Q8_0, else F32).
func KVKernels(t quant.Type) (store, attend Kernel) {
	switch t {
	case quant.F16:
		return KStoreKVF16, KAttendF16
	case quant.Q8_0:
		return KStoreKVQ8_0, KAttendQ8_0
	}
	return KStoreKVF32, KAttendF32
}

// StoreKVKernel is the kernel that stores n rows of dim keys and values
// to a cache of type t (KVKernels' store), as RoundKernel puts it: for
// Q8_0 also the number of blocks it quantizes (the keys' and the values'),
// each a SIMD group's (a warp's); 0 for the element-wise ones (F16, F32),
// a thread a value. Both backends launch it from this, so that their
// grids stay those of the one kernel source they share.
func StoreKVKernel(t quant.Type, n, dim int) (k Kernel, blocks int) {
	k, _ = KVKernels(t)
	if t == quant.Q8_0 {
		return k, 2 * n * dim / quant.Q8_0.BlockSize()
	}
	return k, 0
}

// ScoreBudget bounds the attention scores one launch keeps (bytes): a
// long prompt is attended in chunks of query rows. Tests lower it.
var ScoreBudget = 64 << 20

// MaxHeadDim is the largest head the attention kernels hold.
const MaxHeadDim = 512

// AttendShape is how an attention is launched: Widest is the most
// positions a query row sees (its scores per head), Chunk the query rows
// of one launch, ScoreBytes the scores one launch keeps; Window and
// SoftCap are the attention's as both backends' kernels take them, 0 for
// none (a negative one is none too).
type AttendShape struct {
	Widest, Chunk, ScoreBytes int
	Window                    int
	SoftCap                   float32
}

// Chunks is the launches over n query rows: each one's first row and its
// number of rows (Chunk, fewer in the last).
func (s AttendShape) Chunks(n int) iter.Seq2[int, int] {
	return func(yield func(int, int) bool) {
		for r0 := 0; r0 < n; r0 += s.Chunk {
			if !yield(r0, min(s.Chunk, n-r0)) {
				return
			}
		}
	}
}

// AttendShapeOf is the shape of a's attention for the query rows at pos,
// each launch's scores within ScoreBudget, or why the kernels cannot take
// a (the error names the backend, prefix).
func AttendShapeOf(prefix string, a *backend.Attention, pos []int32) (AttendShape, error) {
	if a.HeadDim > MaxHeadDim || a.HeadDim <= 0 || a.KVHeads <= 0 || a.Heads%a.KVHeads != 0 {
		return AttendShape{}, fmt.Errorf("%s: attention of %d heads of %d over %d KV heads is not supported (heads up to %d)",
			prefix, a.Heads, a.HeadDim, a.KVHeads, MaxHeadDim)
	}
	widest := 0
	for _, p := range pos {
		first := 0
		if a.Window > 0 {
			first = max(0, int(p)-a.Window+1)
		}
		widest = max(widest, int(p)-first+1)
	}
	perRow := a.Heads * widest * 4
	chunk := max(1, min(len(pos), ScoreBudget/perRow))
	sh := AttendShape{Widest: widest, Chunk: chunk, ScoreBytes: chunk * perRow, Window: max(0, a.Window)}
	if a.SoftCap > 0 { // not max(0, a.SoftCap): a NaN is none too
		sh.SoftCap = a.SoftCap
	}
	return sh, nil
}
