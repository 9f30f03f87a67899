package cpu

import (
	"fmt"
	"sync"

	"github.com/churon/churon/engine/backend"
	"github.com/churon/churon/engine/quant"
)

// Tiling. A job's block of weight rows (at most l2Budget bytes) stays in
// L2 while every token's activations pass over it (quant.VecDotTile), so
// each weight byte comes from memory once per matrix product however many
// tokens there are.
const (
	l2Budget = 512 << 10
	// maxMulti is the weights one parallel loop may take: a decode
	// step's gate and up products of eight experts run in one.
	maxMulti = 16
	// jobsPerThread: more, smaller jobs even out the finish of a loop when
	// one core runs slower; fewer save per-job overhead.
	jobsPerThread = 8
	// packedMinRows: inputs of at least this many rows (a prompt, not a
	// decode step or a small batch of them) go through quant's tile
	// kernels where the CPU has them (AMX); a tile holds 16 rows, so
	// fewer would leave most of it idle.
	packedMinRows = 16
	// smallBatchJobs replaces jobsPerThread for a few input rows (a
	// batched decode step): each job lays its activation rows out anew
	// for the four-row kernels, which cost 5 % of a 4-sequence step at
	// 8 jobs per thread.
	smallBatchJobs = 2
	// ilUnpackRows: inputs of at least this many rows (a prompt) multiply
	// an interleaved weight on its rows unpacked to the file's layout,
	// through the tile kernels (AMX's where the CPU has them); fewer run
	// the interleave's own kernel once per row, from L2. On the AMD EPYC
	// without AMX the kernel per row was 4–5× the file layout's few-row
	// kernels at 2–8 rows and level with unpacking at 32–128
	// (BenchmarkMatMulQ4_KInterleave).
	ilUnpackRows = packedMinRows
)

// matmulTask is one matrix product of an n-row input with up to maxMulti
// weights of the same input width. Jobs are segments of weight rows.
type matmulTask struct {
	b    *Backend
	n    int
	outs [maxMulti]mmOut
	segs []mmSeg
	// quantized input, one buffer per distinct activation type and input
	// (MatMulEach), and its tile layout where a weight of that type runs
	// through a tile kernel
	actType [maxMulti]quant.Type
	actX    [maxMulti][]float32
	actN    [maxMulti]int // its rows
	act     [maxMulti][]byte
	packed  [maxMulti]quant.PackedActs
	pack    [maxMulti]bool
	nact    int
	scratch []quant.PackedScratch // per worker
	// per worker: a segment of an interleaved weight's rows unpacked to
	// the file's layout for the kernels of several input rows
	unpacked [][]byte
}

type mmOut struct {
	w          *backend.Tensor
	il         *interleaved // w's rows interleaved, read instead of w.Data; or nil
	dst        []float32
	x          []float32 // its own input (MatMulEach), or nil for the shared one
	n          int       // its input's rows
	act        []byte    // the input in VecDotType(w.Type)
	arow, wrow int       // bytes per activation row and per weight row
	// the input laid out for w's tile kernel, or nil
	packed *quant.PackedActs
}

type mmSeg struct{ out, lo, hi int }

// MatMul computes dst[i] = w · x[i] for n input rows: x is n×w.Cols,
// dst is n×w.Rows. Quantized weights are multiplied with activations
// rounded the way llama.cpp rounds them (see quant.VecDotType).
func (b *Backend) MatMul(dst []float32, w *backend.Tensor, x []float32, n int) {
	b.matMul(dst, w, nil, x, n)
}

// matMul is MatMul reading w's rows from il where il is not nil.
func (b *Backend) matMul(dst []float32, w *backend.Tensor, il *interleaved, x []float32, n int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.mm.outs[0] = mmOut{w: w, il: il, dst: dst}
	b.matmul(x, n, 1)
}

// MatMulMulti computes dst[j] = w[j] · x for several weights sharing the
// input x (n rows): the q, k and v projections, or gate and up. The input
// is rounded once per activation type and all products share one
// parallel loop, which saves a barrier per weight in a decode step. Each
// dst[j] equals what MatMul would write.
func (b *Backend) MatMulMulti(dst [][]float32, w []*backend.Tensor, x []float32, n int) {
	b.matMulMulti(dst, w, nil, x, n)
}

// matMulMulti is MatMulMulti reading w[j]'s rows from il[j] where il is
// given (len(w) entries) and il[j] is not nil.
func (b *Backend) matMulMulti(dst [][]float32, w []*backend.Tensor, il []*interleaved, x []float32, n int) {
	if len(dst) != len(w) || len(w) == 0 || (il != nil && len(il) != len(w)) {
		panic(fmt.Sprintf("cpu: MatMulMulti: %d outputs for %d weights", len(dst), len(w)))
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for start := 0; start < len(w); start += maxMulti {
		k := min(maxMulti, len(w)-start)
		for j := range k {
			b.mm.outs[j] = mmOut{w: w[start+j], il: ilAt(il, start+j), dst: dst[start+j]}
		}
		b.matmul(x, n, k)
	}
}

// MatMulEach computes dst[j] = w[j] · x[j] for weights of one input
// width, each with its own input of n[j] rows: the products of a
// mixture of experts' experts, each over the tokens routed to it, in
// few parallel loops. Products given the same input (the same slice
// start and rows) share its rounding. Each dst[j] equals what MatMul
// would write.
func (b *Backend) MatMulEach(dst [][]float32, w []*backend.Tensor, x [][]float32, n []int) {
	b.matMulEach(dst, w, nil, x, n)
}

// matMulEach is MatMulEach reading w[j]'s rows from il[j] where il is
// given (len(w) entries) and il[j] is not nil.
func (b *Backend) matMulEach(dst [][]float32, w []*backend.Tensor, il []*interleaved, x [][]float32, n []int) {
	if len(dst) != len(w) || len(x) != len(w) || len(n) != len(w) || len(w) == 0 || (il != nil && len(il) != len(w)) {
		panic(fmt.Sprintf("cpu: MatMulEach: %d outputs, %d inputs and %d row counts for %d weights", len(dst), len(x), len(n), len(w)))
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for start := 0; start < len(w); start += maxMulti {
		k := min(maxMulti, len(w)-start)
		most := 0
		for j := range k {
			b.mm.outs[j] = mmOut{w: w[start+j], il: ilAt(il, start+j), dst: dst[start+j], x: x[start+j], n: n[start+j]}
			most = max(most, n[start+j])
		}
		b.matmul(nil, most, k)
	}
}

// ilAt is il[j], or nil where no weight is interleaved (il nil).
func ilAt(il []*interleaved, j int) *interleaved {
	if il == nil {
		return nil
	}
	return il[j]
}

// sameInput reports whether two inputs are the same rows.
func sameInput(a []float32, an int, b []float32, bn int) bool {
	return an == bn && len(a) > 0 && len(b) > 0 && &a[0] == &b[0]
}

// matmul runs b.mm.outs[:k] over x (n rows), or over each out's own
// input where it has one (its n rows, at most n). The caller holds b.mu.
func (b *Backend) matmul(x []float32, n, k int) {
	t := &b.mm
	t.n = n
	if n <= 0 {
		return
	}
	cols := t.outs[0].w.Cols()
	t.nact = 0
	for j := range k {
		o := &t.outs[j]
		w := o.w
		xj, nj := o.x, o.n
		if xj == nil {
			xj, nj = x, n
		}
		o.n = nj
		if w.Cols() != cols {
			panic(fmt.Sprintf("cpu: matmul %s: %d columns, %s has %d", w.Name, w.Cols(), t.outs[0].w.Name, cols))
		}
		at := quant.VecDotType(w.Type)
		arow, ok := at.RowSize(cols)
		wrow, ok2 := w.Type.RowSize(cols)
		if !ok || !ok2 || !quant.VecDotSupported(w.Type) {
			panic(fmt.Sprintf("cpu: matmul %s: rows of %d are not whole %v blocks", w.Name, cols, w.Type))
		}
		if nj <= 0 || len(xj) < nj*cols || len(o.dst) < nj*w.Rows() || len(w.Data) < wrow*w.Rows() ||
			(o.il != nil && len(o.il.data) < o.il.l.size(w.Rows(), cols)) {
			panic(fmt.Sprintf("cpu: matmul %s: buffers too small for %d rows", w.Name, nj))
		}
		o.arow, o.wrow = arow, wrow
		a := -1
		for i := range t.nact {
			if t.actType[i] == at && sameInput(t.actX[i], t.actN[i], xj, nj) {
				a = i
			}
		}
		if a < 0 {
			a = t.nact
			t.nact++
			t.actType[a] = at
			t.actX[a], t.actN[a] = xj, nj
			t.act[a] = growB(t.act[a], nj*arow)
			t.pack[a] = false
		}
		o.act = t.act[a][:nj*arow]
		o.packed = nil
		if nj >= packedMinRows && quant.PackedKernel(w.Type) {
			if !t.pack[a] {
				t.pack[a] = t.packed[a].Reset(at, nj, cols)
			}
			if t.pack[a] {
				o.packed = &t.packed[a]
			}
		}
	}
	if len(t.scratch) < b.threads {
		t.scratch = make([]quant.PackedScratch, b.threads)
		t.unpacked = make([][]byte, b.threads)
	}
	b.quantizeInput(cols)

	// Segments of weight rows: several per worker for balance, and for a
	// multi-token input no larger than the L2 budget.
	total := 0
	for j := range k {
		total += t.outs[j].w.Rows()
	}
	jobs := jobsPerThread
	if n > 1 && n < packedMinRows {
		jobs = smallBatchJobs
	}
	seg := max(16, (total+jobs*b.threads-1)/(jobs*b.threads))
	t.segs = t.segs[:0]
	for j := range k {
		o := &t.outs[j]
		rows := o.w.Rows()
		s := seg
		if o.n > 1 {
			s = max(8, min(s, l2Budget/o.wrow))
		}
		if o.packed != nil || o.n >= packedMinRows || o.il != nil {
			// whole groups of 16 weight rows for the tile kernels (AMX,
			// and quant's K-quant tiles, which widen 16 rows at a time)
			// and the interleaves
			s = (s + 15) &^ 15
		}
		for lo := 0; lo < rows; lo += s {
			t.segs = append(t.segs, mmSeg{j, lo, min(rows, lo+s)})
		}
	}
	b.pool.parallel(t, len(t.segs), 1)
	for j := range k {
		t.outs[j] = mmOut{}
	}
	clear(t.actX[:t.nact])
}

func (t *matmulTask) run(worker, lo, hi int) {
	for _, sg := range t.segs[lo:hi] {
		t.segment(worker, sg)
	}
}

func (t *matmulTask) segment(worker int, sg mmSeg) {
	o := &t.outs[sg.out]
	w := o.w
	cols, rows, n := w.Cols(), w.Rows(), o.n
	var wdata []byte
	if o.il != nil {
		packed, nr := o.il.from(sg.lo), sg.hi-sg.lo
		if n < ilUnpackRows {
			// Token by token: the interleave kernel reads the segment
			// from L2 (it is sized for that when n > 1) at several
			// times the rate of unpacking it.
			for i := range n {
				out := o.dst[i*rows+sg.lo : i*rows+sg.hi]
				if err := o.il.l.rows(packed, nr, o.act[i*o.arow:(i+1)*o.arow], cols, out); err != nil {
					panic(fmt.Sprintf("cpu: matmul %s: %v", w.Name, err)) // shapes checked: a bug
				}
			}
			return
		}
		// A prompt: the file's layout for the tile kernels below, in L2
		// (the segment is sized for it).
		wdata = growB(t.unpacked[worker], nr*o.wrow)
		t.unpacked[worker] = wdata
		if err := o.il.l.unpack(wdata, packed, nr, cols); err != nil {
			panic(fmt.Sprintf("cpu: matmul %s: %v", w.Name, err))
		}
	} else {
		wdata = w.Data[sg.lo*o.wrow : sg.hi*o.wrow]
	}
	if o.packed != nil {
		quant.VecDotPacked(w.Type, wdata, o.wrow, sg.hi-sg.lo, o.packed, o.dst[sg.lo:], rows, &t.scratch[worker])
		return
	}
	if n == 1 {
		// All the segment's rows in one call: quant lays the activations
		// out once and prefetches the rows ahead as it reads them.
		quant.VecDotRows(w.Type, wdata, o.wrow, sg.hi-sg.lo, o.act, cols, o.dst[sg.lo:sg.hi])
		return
	}
	// The segment's rows (sized to stay in L2) against every token:
	// quant prepares each group of activation rows once per call. (Chunks
	// with prefetch, as for one token, made a 4-sequence step 12 % slower:
	// the preparation is paid per call.)
	quant.VecDotTile(w.Type, wdata, o.wrow, sg.hi-sg.lo, o.act, o.arow, n, cols, o.dst[sg.lo:], rows)
}

// quantTask rounds input rows to the activation types of a matmul
// (each with its input, b.mm.actX).
type quantTask struct {
	b    *Backend
	cols int
	mu   sync.Mutex
	err  error
}

func (b *Backend) quantizeInput(cols int) {
	t := &b.qa
	t.cols, t.err = cols, nil
	jobs := 0
	for a := range b.mm.nact {
		jobs += b.mm.actN[a]
	}
	if b.mm.n == 1 || jobs < 2*b.threads {
		t.run(0, 0, jobs)
	} else {
		b.pool.parallel(t, jobs, max(1, jobs/(4*b.threads)))
	}
	if t.err != nil {
		panic(fmt.Sprintf("cpu: matmul: rounding activations: %v", t.err))
	}
}

func (t *quantTask) run(_, lo, hi int) {
	m := &t.b.mm
	for j := lo; j < hi; j++ {
		// row i of input a, the inputs' rows one after the other
		a, i := 0, j
		for i >= m.actN[a] {
			i -= m.actN[a]
			a++
		}
		at := m.actType[a]
		arow, _ := at.RowSize(t.cols)
		row := m.act[a][i*arow : (i+1)*arow]
		if err := quant.QuantizeActivations(at, m.actX[a][i*t.cols:(i+1)*t.cols], row); err != nil {
			// The shapes were checked, so this cannot happen; if it does,
			// quantizeInput reports it loudly.
			t.mu.Lock()
			t.err = err
			t.mu.Unlock()
			continue
		}
		if m.pack[a] {
			m.packed[a].PackRow(i, row)
		}
	}
}
