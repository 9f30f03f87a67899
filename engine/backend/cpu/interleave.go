package cpu

import (
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/churon/churon/engine/backend"
	"github.com/churon/churon/engine/quant"
)

// Row interleaves. Where quant has a decode kernel over a weight type's
// rows interleaved 16 at a time (Q4_K's and Q6_K's, at the avx2 and
// avx512 levels: Q4_K's 1.7× the file layout's kernel on weights in
// cache, level from DRAM, where both read what a core pulls), the device repacks each matrix of that type
// once, when it is uploaded, and every matrix product of it reads the
// interleave: a decode step straight through the kernel, a batched one
// through the kernel once per input row on a segment sized for L2 (4–5×
// the file layout's few-row kernels), a prompt on the segment unpacked
// back to the file's layout into a per-worker scratch, for the tile
// kernels. The file's pages of the tensor are then released
// (releasePages) so that the copy takes their place in memory instead of
// adding to it; Tensor.Data stays valid (a page read again comes back
// from the file). Weights read into memory (--no-mmap) give those pages
// back to their file the same way (hugemem.Refile); only weights on the
// Go heap or locked in memory keep them, and there the copy adds to them.
//
// CHURON_REPACK=0 keeps every weight in the file's layout (A/B runs); the
// device's name says which ran.

// ilRows is the rows of one group of every interleave.
const ilRows = 16

// layout is one weight type's 16-row interleave in quant: a group of 16
// rows (a partial last group padded with zero rows) is size(16, n) bytes.
type layout struct {
	t      quant.Type
	size   func(nRows, n int) int
	repack func(dst, rows []byte, stride, nRows, n int) error
	rows   func(packed []byte, nRows int, act []byte, n int, out []float32) error // VecDotRows on the interleave
	unpack func(dst, packed []byte, nRows, n int) error                           // back to the file's bytes
	// fast reports whether rows runs a SIMD kernel at the current level:
	// the Go twin is far slower than the file layout's kernels.
	fast func() bool
}

// layouts are the interleaves the device holds weights in, a line a type.
var layouts = []layout{
	{quant.Q4_K, quant.KX16Size, quant.RepackQ4_KX16, quant.VecDotRowsQ4_KX16, quant.UnpackQ4_KX16, quant.KX16Kernel},
	{quant.Q6_K, quant.Q6KX16Size, quant.RepackQ6_KX16, quant.VecDotRowsQ6_KX16, quant.UnpackQ6_KX16, avx2Level},
	{quant.Q4_0, quant.Q4_0X16Size, quant.RepackQ4_0X16, quant.VecDotRowsQ4_0X16, quant.UnpackQ4_0X16, avx2Only},
}

// avx2Only reports whether quant runs its avx2 kernels and not its
// avx512 ones: Q4_0's interleave gains there, while at avx512 the file
// layout's 16-row kernels read memory faster.
func avx2Only() bool { return quant.SIMDLevel() == "avx2" }

// layoutOf is the interleave the device holds weights of type t in, or
// nil for none.
func layoutOf(t quant.Type) *layout {
	for i := range layouts {
		if layouts[i].t == t {
			return &layouts[i]
		}
	}
	return nil
}

// avx2Level reports whether quant runs its avx2 kernels or better
// (CHURON_CPU caps the level), where q6x16's kernels run.
func avx2Level() bool { l := quant.SIMDLevel(); return l == "avx2" || l == "avx512" }

// repackSetting reads CHURON_REPACK: "0" keeps the file's layout.
func repackSetting() bool { return os.Getenv("CHURON_REPACK") != "0" }

// interleaved is a weight's rows in a layout.
type interleaved struct {
	l     *layout
	data  []byte
	group int // bytes of one group of ilRows rows
}

// from is the interleave from row on (a multiple of ilRows).
func (il *interleaved) from(row int) []byte { return il.data[row/ilRows*il.group:] }

// sub is rows [lo, lo+n) of il (lo a multiple of ilRows) as a weight of
// their own: one expert of a 3-D tensor.
func (il *interleaved) sub(lo, n int, cols int) *interleaved {
	return &interleaved{l: il.l, data: il.from(lo)[:il.l.size(n, cols)], group: il.group}
}

// interleavable reports whether the device would hold t interleaved, and
// in which layout: a matrix (or stack of experts' matrices, each of whole
// groups, so that one expert's slice is whole groups too) of a type with
// a fast interleave kernel.
func interleavable(t *backend.Tensor) *layout {
	l := layoutOf(t.Type)
	if l == nil || t.IsVector() || !l.fast() || t.Ne[3] != 1 || (t.Ne[2] > 1 && t.Ne[1]%ilRows != 0) {
		return nil
	}
	if _, ok := t.Type.RowSize(t.Cols()); !ok {
		return nil
	}
	return l
}

// repackTask repacks a tensor's rows into its interleave, a job per group.
type repackTask struct {
	il     *interleaved
	t      *backend.Tensor
	stride int
	mu     sync.Mutex
	err    error
}

func (r *repackTask) run(_, lo, hi int) {
	rows, cols := r.t.Rows(), r.t.Cols()
	r0, r1 := lo*ilRows, min(rows, hi*ilRows)
	err := r.il.l.repack(r.il.data[lo*r.il.group:hi*r.il.group], r.t.Data[r0*r.stride:], r.stride, r1-r0, cols)
	if err != nil {
		r.mu.Lock()
		r.err = err
		r.mu.Unlock()
	}
}

// interleave repacks w's tensor in layout l on the device's threads and
// releases the file's pages of it.
func (d *Device) interleave(w *Weight, l *layout) error {
	t := w.t
	rows, cols := t.Rows(), t.Cols()
	stride, _ := t.Type.RowSize(cols)
	if len(t.Data) < rows*stride {
		return fmt.Errorf("cpu: %s: %d bytes for %d rows of %d", t.Name, len(t.Data), rows, stride)
	}
	// Off the Go heap (where the collector would let garbage grow by as
	// much again before a cycle), in 2 MiB pages where the kernel gives
	// them: fewer faults while repacking, fewer TLB misses streaming it.
	// Packed end to end in the device's arena, so that they lie in huge
	// pages but at the ends of its chunks: one mapping a matrix would
	// leave each one's tail in small pages, 40 % of a 1.1B Q4_K_M
	// model's weights.
	data, mapped := d.arena.Alloc(l.size(rows, cols))
	il := &interleaved{l: l, data: data, group: l.size(ilRows, cols)}
	groups := (rows + ilRows - 1) / ilRows
	d.b.mu.Lock()
	d.rp = repackTask{il: il, t: t, stride: stride}
	d.b.pool.parallel(&d.rp, groups, max(1, groups/(4*d.b.threads)))
	err := d.rp.err
	d.rp = repackTask{}
	d.b.mu.Unlock()
	if err != nil {
		return fmt.Errorf("cpu: %s: %w", t.Name, err)
	}
	w.il, w.lazy = il, nil
	dup := data
	if !mapped {
		dup = nil // on the Go heap, which Close does not unmap: no lock moves there
	}
	releasePages(t.Data[:rows*stride], dup)
	return nil
}

// ilNote is what the device's name says about interleaving: the types of
// the weights it holds interleaved (none named: none is, as for a model
// without those types, or a level without their kernels), or that
// CHURON_REPACK turned it off.
func (d *Device) ilNote() string {
	if !d.repack {
		return "CHURON_REPACK=0"
	}
	var ts []string
	for _, l := range layouts {
		if d.held[l.t] {
			ts = append(ts, l.t.String())
		}
	}
	if len(ts) == 0 {
		return ""
	}
	return strings.Join(ts, ", ") + " interleaved"
}

// lazyTable names the tensor the device interleaves only at its first
// matrix product: the token embeddings, which a model with a separate
// output head only reads rows of (Embed) — interleaving them would add a
// copy nothing multiplies — and a tied one multiplies as its output.
const lazyTable = "token_embd.weight"
