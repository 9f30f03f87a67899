//go:build linux || windows

package cuda

import (
	"github.com/churon/churon/engine/backend"
	"github.com/churon/churon/engine/backend/cpu"
	"github.com/churon/churon/engine/backend/internal/gpucommon"
)

// Write implements backend.Device.
func (d *Device) Write(dst backend.Buf, src []float32) {
	n := min(len(src), dst.Len())
	if n == 0 {
		return
	}
	p := d.ptr(dst)
	h, buf := d.stage(4 * n)
	copy(buf, floats(src[:n]))
	d.record(cmd{op: opHtoD, nargs: 3, args: [maxArgs]uint64{p, uint64(h), uint64(4 * n)}})
}

// Read implements backend.Device: dst is filled at the next Sync.
func (d *Device) Read(dst []float32, src backend.Buf) {
	n := min(len(dst), src.Len())
	if n == 0 {
		return
	}
	p := d.ptr(src)
	h, _ := d.stage(4 * n)
	d.record(cmd{op: opDtoH, nargs: 3, args: [maxArgs]uint64{uint64(h), p, uint64(4 * n)}})
	d.reads = append(d.reads, pendingRead{dst: dst[:n], src: h})
}

// CopyRows implements backend.Device.
func (d *Device) CopyRows(dst backend.Buf, dstStride int, src backend.Buf, srcStride int, rows, cols int) {
	if rows <= 0 || cols <= 0 {
		return
	}
	pd, ps := d.ptr(dst), d.ptr(src)
	if dstStride == cols && srcStride == cols {
		d.record(cmd{op: opDtoD, nargs: 3, args: [maxArgs]uint64{pd, ps, uint64(4 * rows * cols)}})
		return
	}
	d.launch1(gpucommon.KCopyRows, rows*cols, pd, i32(dstStride), ps, i32(srcStride), i32(rows), i32(cols))
}

// Embed implements backend.Device: the rows are widened on the host from
// the file's table (as the CPU does) and written.
func (d *Device) Embed(dst backend.Buf, table backend.Weight, ids []int32) {
	t := d.weight(table).T
	rows, err := gpucommon.EmbedRows("cuda", t, ids)
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
	d.launch(gpucommon.KRMSNorm, [3]uint32{uint32(rows), 1, 1}, [3]uint32{256, 1, 1}, d.ptr(x), d.ptr(dst), d.values(w), i32(dim), f32(eps))
}

// AddBias implements backend.Device.
func (d *Device) AddBias(x backend.Buf, b backend.Weight) {
	dim := d.weight(b).T.Elements()
	n := x.Len() / dim * dim
	d.launch1(gpucommon.KAddBias, n, d.ptr(x), d.values(b), i64(n), i32(dim))
}

// RoPE implements backend.Device, with the CPU's table.
func (d *Device) RoPE(x backend.Buf, pos []int32, heads, headDim int, r *backend.Rope) {
	if len(pos) == 0 || r.Dims <= 0 {
		return
	}
	tab := d.ropeTable(pos, r)
	if tab == 0 {
		return
	}
	neox := 0
	if r.Mode == backend.RopeNeoX {
		neox = 1
	}
	d.launch1(gpucommon.KRope, len(pos)*heads*(r.Dims/2), d.ptr(x), tab, i32(len(pos)), i32(heads), i32(headDim), i32(r.Dims), i32(neox))
}

// StoreKV implements backend.Device.
func (d *Device) StoreKV(kv backend.KV, pos []int32, k, v backend.Buf) {
	c := d.kv(kv)
	n := len(pos)
	if n == 0 {
		return
	}
	pp := d.toDevice(int32s(pos))[0]
	if pp == 0 {
		return
	}
	dim := c.spec.Dim
	store, blocks := gpucommon.StoreKVKernel(c.spec.Type, n, dim)
	if blocks > 0 {
		// a warp per block, eight to a thread block
		d.launch(store, [3]uint32{uint32((blocks + 7) / 8), 1, 1}, [3]uint32{256, 1, 1}, d.ptr(k), d.ptr(v), c.k, c.v, pp, i32(n), i32(dim))
		return
	}
	d.launch1(store, n*dim, d.ptr(k), d.ptr(v), c.k, c.v, pp, i32(n), i32(dim))
}

// Attend implements backend.Device.
func (d *Device) Attend(dst, q backend.Buf, kv backend.KV, pos []int32, a *backend.Attention, in backend.AttendInputs) {
	c := d.kv(kv)
	n := len(pos)
	if n == 0 {
		return
	}
	sh, err := gpucommon.AttendShapeOf("cuda", a, pos)
	if err != nil {
		d.failOp(err)
		return
	}
	sp := d.ensure(&d.scores, int64(sh.ScoreBytes), "attention scores")
	pp := d.toDevice(int32s(pos))[0]
	if sp == 0 || pp == 0 {
		return
	}
	_, k := gpucommon.KVKernels(c.spec.Type)
	var sinks, gate uint64
	if a.Sinks {
		sinks = d.values(in.Sinks)
	}
	qd := int64(a.Heads) * int64(a.HeadDim) * 4
	if a.Gated {
		gate = d.ptr(in.Gate)
	}
	for r0, rn := range sh.Chunks(n) {
		off := uint64(int64(r0) * qd)
		g := uint64(0)
		if gate != 0 {
			g = gate + off
		}
		d.launch(k, [3]uint32{uint32(rn), uint32(a.Heads), 1}, [3]uint32{256, 1, 1},
			d.ptr(dst)+off, d.ptr(q)+off, c.k, c.v, pp+uint64(4*r0),
			i32(a.Heads), i32(a.KVHeads), i32(a.HeadDim), i32(c.spec.Dim), f32(a.Scale), i32(sh.Window), f32(sh.SoftCap),
			sinks, g, sp, i32(sh.Widest), cpuVec)
	}
}

// cpuVec tells the kernels whose exponentials and sums follow the CPU's
// which CPU kernels to follow: its vector kernels (AVX2 and FMA), or its
// plain Go loops. Either is as accurate; following this machine's keeps
// the GPU equal to the CPU it falls back to.
var cpuVec = func() uint64 {
	if cpu.VectorKernels() {
		return 1
	}
	return 0
}()

// SwiGLU implements backend.Device.
func (d *Device) SwiGLU(dst, gate, up backend.Buf) {
	n := gate.Len()
	d.launch1(gpucommon.KSwiGLU, n, d.ptr(dst), d.ptr(gate), d.ptr(up), i64(n), cpuVec)
}

// GeGLU implements backend.Device, through the CPU's GELU table.
func (d *Device) GeGLU(dst, gate, up backend.Buf) {
	n := gate.Len()
	d.launch1(gpucommon.KGeGLU, n, d.ptr(dst), d.ptr(gate), d.ptr(up), i64(n), d.gelu)
}

// SwiGLUClamped implements backend.Device.
func (d *Device) SwiGLUClamped(dst, gate, up backend.Buf, alpha, limit float32) {
	n := gate.Len()
	d.launch1(gpucommon.KSwiGLUClamped, n, d.ptr(dst), d.ptr(gate), d.ptr(up), i64(n), f32(alpha), f32(limit))
}

// Scale implements backend.Device.
func (d *Device) Scale(x backend.Buf, s float32) {
	d.launch1(gpucommon.KScale, x.Len(), d.ptr(x), i64(x.Len()), f32(s))
}

// SoftCap implements backend.Device.
func (d *Device) SoftCap(x backend.Buf, c float32) {
	d.launch1(gpucommon.KSoftCap, x.Len(), d.ptr(x), i64(x.Len()), f32(c))
}

// Add implements backend.Device.
func (d *Device) Add(dst, x backend.Buf) {
	n := x.Len()
	d.launch1(gpucommon.KAdd, n, d.ptr(dst), d.ptr(x), i64(n))
}

// GatherRows implements backend.Device.
func (d *Device) GatherRows(dst, src backend.Buf, cols int, rows []int32) {
	if len(rows) == 0 {
		return
	}
	ip := d.toDevice(int32s(rows))[0]
	if ip == 0 {
		return
	}
	d.launch1(gpucommon.KGatherRows, len(rows)*cols, d.ptr(dst), d.ptr(src), i32(cols), ip, i32(len(rows)))
}

// ScatterAddRows implements backend.Device.
func (d *Device) ScatterAddRows(dst, src backend.Buf, cols int, rows []int32, scale []float32) {
	if len(rows) == 0 {
		return
	}
	var ip, sp uint64
	if scale != nil {
		p := d.toDevice(int32s(rows), floats(scale[:len(rows)]))
		ip, sp = p[0], p[1]
	} else {
		ip = d.toDevice(int32s(rows))[0]
	}
	if ip == 0 || (scale != nil && sp == 0) {
		return
	}
	d.launch1(gpucommon.KScatterAddRows, cols, d.ptr(dst), d.ptr(src), i32(cols), ip, sp, i32(len(rows)))
}
