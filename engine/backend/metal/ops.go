package metal

import (
	"github.com/churon/churon/engine/backend"
	"github.com/churon/churon/engine/backend/cpu"
	"github.com/churon/churon/engine/backend/internal/gpucommon"
)

// Write implements backend.Device: src is staged now and copied in
// order.
func (d *Device) Write(dst backend.Buf, src []float32) {
	n := min(len(src), dst.Len())
	if n == 0 {
		return
	}
	p := d.buf(dst)
	s, buf := d.staged(4 * n)
	copy(buf, gpucommon.BytesOf(src[:n]))
	d.launch1(kCopyWords, n, []uint32{i32(n)}, p, s)
}

// Read implements backend.Device: dst is filled at the next Sync.
func (d *Device) Read(dst []float32, src backend.Buf) {
	n := min(len(dst), src.Len())
	if n == 0 {
		return
	}
	p := d.buf(src)
	s, buf := d.staged(4 * n)
	d.launch1(kCopyWords, n, []uint32{i32(n)}, s, p)
	d.reads = append(d.reads, pendingRead{dst: dst[:n], src: buf})
}

// CopyRows implements backend.Device.
func (d *Device) CopyRows(dst backend.Buf, dstStride int, src backend.Buf, srcStride int, rows, cols int) {
	if rows <= 0 || cols <= 0 {
		return
	}
	pd, ps := d.buf(dst), d.buf(src)
	if dstStride == cols && srcStride == cols {
		d.launch1(kCopyWords, rows*cols, []uint32{i32(rows * cols)}, pd, ps)
		return
	}
	d.launch1(gpucommon.KCopyRows, rows*cols, []uint32{i32(rows), i32(cols), i32(dstStride), i32(srcStride)}, pd, ps)
}

// Embed implements backend.Device: the rows are widened on the host from
// the file's table (as the CPU does) and written.
func (d *Device) Embed(dst backend.Buf, table backend.Weight, ids []int32) {
	t := d.weight(table).T
	rows, err := gpucommon.EmbedRows("metal", t, ids)
	if err != nil {
		d.failOp(err)
		return
	}
	d.Write(dst, rows)
}

// RMSNorm implements backend.Device.
func (d *Device) RMSNorm(dst, x backend.Buf, w backend.Weight, eps float32) {
	dim := d.weight(w).T.Elements()
	rows := x.Len() / dim
	if rows == 0 {
		return
	}
	d.launch(gpucommon.KRMSNorm, [3]uint32{uint32(rows), 1, 1}, [3]uint32{256, 1, 1}, []uint32{i32(dim), f32(eps)},
		d.buf(x), d.buf(dst), d.values(w))
}

// AddBias implements backend.Device.
func (d *Device) AddBias(x backend.Buf, b backend.Weight) {
	dim := d.weight(b).T.Elements()
	n := x.Len() / dim * dim
	d.launch1(gpucommon.KAddBias, n, []uint32{i32(n), i32(dim)}, d.buf(x), d.values(b))
}

// ropeTable stages the (cos, sin) table for pos and r
// (gpucommon.RopeTable) when it is not the last one's.
func (d *Device) ropeTable(pos []int32, r *backend.Rope) bind {
	if at, ok := d.rope.Kept(pos, r); ok {
		return at
	}
	host := d.rope.Make(pos, r)
	at, buf := d.staged(4 * len(host))
	copy(buf, gpucommon.BytesOf(host))
	d.rope.Keep(at)
	return at
}

// RoPE implements backend.Device, with the CPU's table.
func (d *Device) RoPE(x backend.Buf, pos []int32, heads, headDim int, r *backend.Rope) {
	if len(pos) == 0 || r.Dims <= 0 {
		return
	}
	tab := d.ropeTable(pos, r)
	n := len(pos) * heads * (r.Dims / 2)
	d.launch1(gpucommon.KRope, n, []uint32{i32(len(pos)), i32(heads), i32(headDim), i32(r.Dims), b32(r.Mode == backend.RopeNeoX)},
		d.buf(x), tab)
}

// ints stages host integers.
func (d *Device) ints(v []int32) bind {
	at, buf := d.staged(4 * len(v))
	copy(buf, gpucommon.BytesOf(v))
	return at
}

// StoreKV implements backend.Device.
func (d *Device) StoreKV(kv backend.KV, pos []int32, k, v backend.Buf) {
	c := d.kv(kv)
	n := len(pos)
	if n == 0 {
		return
	}
	pp := d.ints(pos)
	dim := c.spec.Dim
	params := []uint32{i32(n), i32(dim)}
	kb, vb := d.buf(k), d.buf(v)
	store, blocks := gpucommon.StoreKVKernel(c.spec.Type, n, dim)
	if blocks > 0 {
		// a SIMD group per block, eight to a threadgroup
		d.launch(store, [3]uint32{uint32((blocks + 7) / 8), 1, 1}, [3]uint32{256, 1, 1}, params, kb, vb, c.k(), c.v(), pp)
		return
	}
	d.launch1(store, n*dim, params, kb, vb, c.k(), c.v(), pp)
}

// Attend implements backend.Device.
func (d *Device) Attend(dst, q backend.Buf, kv backend.KV, pos []int32, a *backend.Attention, in backend.AttendInputs) {
	c := d.kv(kv)
	n := len(pos)
	if n == 0 {
		return
	}
	sh, err := gpucommon.AttendShapeOf("metal", a, pos)
	if err != nil {
		d.failOp(err)
		return
	}
	sb, ok := d.ensure(&d.scores, sh.ScoreBytes, "attention scores")
	if !ok {
		return
	}
	pp := d.ints(pos)
	_, k := gpucommon.KVKernels(c.spec.Type)
	sinks, gate := d.gelu.at(0), d.gelu.at(0) // bound but unread when absent
	if a.Sinks {
		sinks = d.values(in.Sinks)
	}
	if a.Gated {
		gate = d.buf(in.Gate)
	}
	params := []uint32{i32(a.Heads), i32(a.KVHeads), i32(a.HeadDim), i32(c.spec.Dim), f32(a.Scale), i32(sh.Window),
		f32(sh.SoftCap), i32(sh.Widest), b32(cpu.VectorKernels()), b32(a.Sinks), b32(a.Gated)}
	qd := a.Heads * a.HeadDim * 4
	pd, pq := d.buf(dst), d.buf(q)
	for r0, rn := range sh.Chunks(n) {
		off := r0 * qd
		g := gate
		if a.Gated {
			g.off += off
		}
		d.launch(k, [3]uint32{uint32(rn), uint32(a.Heads), 1}, [3]uint32{256, 1, 1}, params,
			bind{pd.h, pd.off + off}, bind{pq.h, pq.off + off}, c.k(), c.v(), bind{pp.h, pp.off + 4*r0}, sinks, g, sb.at(0))
	}
}

// SwiGLU implements backend.Device.
func (d *Device) SwiGLU(dst, gate, up backend.Buf) {
	n := gate.Len()
	d.launch1(gpucommon.KSwiGLU, n, []uint32{i32(n), b32(cpu.VectorKernels())}, d.buf(dst), d.buf(gate), d.buf(up))
}

// GeGLU implements backend.Device, through the CPU's GELU table.
func (d *Device) GeGLU(dst, gate, up backend.Buf) {
	n := gate.Len()
	d.launch1(gpucommon.KGeGLU, n, []uint32{i32(n)}, d.buf(dst), d.buf(gate), d.buf(up), d.gelu.at(0))
}

// SwiGLUClamped implements backend.Device.
func (d *Device) SwiGLUClamped(dst, gate, up backend.Buf, alpha, limit float32) {
	n := gate.Len()
	d.launch1(gpucommon.KSwiGLUClamped, n, []uint32{i32(n), f32(alpha), f32(limit)}, d.buf(dst), d.buf(gate), d.buf(up))
}

// Scale implements backend.Device.
func (d *Device) Scale(x backend.Buf, s float32) {
	d.launch1(gpucommon.KScale, x.Len(), []uint32{i32(x.Len()), f32(s)}, d.buf(x))
}

// SoftCap implements backend.Device.
func (d *Device) SoftCap(x backend.Buf, c float32) {
	d.launch1(gpucommon.KSoftCap, x.Len(), []uint32{i32(x.Len()), f32(c)}, d.buf(x))
}

// Add implements backend.Device.
func (d *Device) Add(dst, x backend.Buf) {
	n := x.Len()
	d.launch1(gpucommon.KAdd, n, []uint32{i32(n)}, d.buf(dst), d.buf(x))
}

// GatherRows implements backend.Device.
func (d *Device) GatherRows(dst, src backend.Buf, cols int, rows []int32) {
	if len(rows) == 0 {
		return
	}
	ip := d.ints(rows)
	d.launch1(gpucommon.KGatherRows, len(rows)*cols, []uint32{i32(len(rows)), i32(cols)}, d.buf(dst), d.buf(src), ip)
}

// ScatterAddRows implements backend.Device.
func (d *Device) ScatterAddRows(dst, src backend.Buf, cols int, rows []int32, scale []float32) {
	if len(rows) == 0 {
		return
	}
	ip := d.ints(rows)
	sp := d.gelu.at(0) // bound but unread without scales
	if scale != nil {
		var buf []byte
		sp, buf = d.staged(4 * len(rows))
		copy(buf, gpucommon.BytesOf(scale[:len(rows)]))
	}
	d.launch1(gpucommon.KScatterAddRows, cols, []uint32{i32(len(rows)), i32(cols), b32(scale != nil)}, d.buf(dst), d.buf(src), ip, sp)
}
