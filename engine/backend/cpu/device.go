package cpu

import (
	"fmt"

	"github.com/churon/churon/engine/backend"
	"github.com/churon/churon/engine/quant"
	"github.com/churon/churon/internal/hugemem"
)

// Device is the CPU as a backend.Device: buffers are host memory, an
// uploaded weight is the mapped tensor itself (one-row tensors widened
// to float32 once; a matrix of a type with a fast 16-row interleave
// repacked into it, see interleave.go), and each operation runs on the
// Backend's kernels before the call returns, so Read's destination is
// ready at once and Sync only reports what failed.
type Device struct {
	b      *Backend
	err    error // the first failure since the last Sync
	repack bool  // interleave the weights that have a layout (CHURON_REPACK)
	rp     repackTask
	arena  hugemem.Arena       // the interleaves' memory, released by Close
	held   map[quant.Type]bool // the types of the weights held interleaved (or at their first product)

	// MatMulMulti's arguments in the kernels' types, reused so that a
	// decode step allocates nothing.
	mdst [][]float32
	mw   []*backend.Tensor
	mil  []*interleaved
	mx   [][]float32 // MatMulEach's inputs
}

// NewDevice returns the CPU device with threads worker threads
// (0 = DefaultThreads).
func NewDevice(threads int) *Device {
	return &Device{b: New(threads), repack: repackSetting()}
}

// Kernels is the backend whose kernels the device runs: host slices in,
// host slices out.
func (d *Device) Kernels() *Backend { return d.b }

// Threads is the number of threads the device uses.
func (d *Device) Threads() int { return d.b.Threads() }

// Name implements backend.Device: "CPU avx512 (2 threads; Q4_K
// interleaved)".
func (d *Device) Name() string { return d.b.name(d.ilNote()) }

// Supports implements backend.Device: every type with a dot product.
func (d *Device) Supports(t quant.Type) bool { return quant.VecDotSupported(t) }

// FreeBytes implements backend.Device: the CPU does not plan by memory.
func (d *Device) FreeBytes() int64 { return -1 }

// hostMem is an allocation of the CPU device.
type hostMem struct{ f []float32 }

func (m *hostMem) Len() int { return len(m.f) }

// host is the memory a buffer of this device views.
func host(b backend.Buf) []float32 {
	m, ok := b.Mem().(*hostMem)
	if !ok {
		panic(fmt.Sprintf("cpu: a buffer of another device (%T)", b.Mem()))
	}
	return m.f[b.Off() : b.Off()+b.Len()]
}

// Alloc implements backend.Device.
func (d *Device) Alloc(n int) (backend.Buf, error) {
	return backend.NewBuf(&hostMem{f: make([]float32, n)}), nil
}

// Free implements backend.Device; host memory goes with the garbage
// collector.
func (d *Device) Free(backend.Buf) {}

// Weight is a tensor resident on the CPU: the file's tensor, for a
// one-row tensor its values as float32, and for a matrix the device
// holds interleaved its rows in that layout, which the matrix products
// then read instead of the tensor's data.
type Weight struct {
	t    *backend.Tensor
	f    []float32
	il   *interleaved
	lazy *layout // the layout to interleave it in at its first product
}

// NewWeight makes t resident in host memory: zero-copy for a matrix,
// widened to float32 for a one-row tensor.
func NewWeight(t *backend.Tensor) (*Weight, error) {
	w := &Weight{t: t}
	if t.IsVector() {
		w.f = make([]float32, t.Elements())
		if err := quant.Dequantize(t.Type, t.Data, w.f); err != nil {
			return nil, fmt.Errorf("cpu: %s: %w", t.Name, err)
		}
	}
	return w, nil
}

// Tensor implements backend.Weight.
func (w *Weight) Tensor() *backend.Tensor { return w.t }

// Values is a one-row weight's values (nil for a matrix).
func (w *Weight) Values() []float32 { return w.f }

func weight(w backend.Weight) *Weight {
	cw, ok := w.(*Weight)
	if !ok {
		panic(fmt.Sprintf("cpu: a weight of another device (%T)", w))
	}
	return cw
}

func values(w backend.Weight) []float32 {
	if w == nil {
		return nil
	}
	return weight(w).f
}

func kvOf(kv backend.KV) *KV {
	c, ok := kv.(*KV)
	if !ok {
		panic(fmt.Sprintf("cpu: a KV cache of another device (%T)", kv))
	}
	return c
}

// Upload implements backend.Device: NewWeight, and a matrix that has a
// fast interleave repacked into it (the token embeddings at their first
// matrix product, if any: see lazyTable).
func (d *Device) Upload(t *backend.Tensor) (backend.Weight, error) {
	w, err := NewWeight(t)
	if err != nil || !d.repack {
		return w, err
	}
	if l := interleavable(t); l != nil {
		if d.held == nil {
			d.held = make(map[quant.Type]bool)
		}
		d.held[l.t] = true
		if t.Name == lazyTable {
			w.lazy = l
		} else if err := d.interleave(w, l); err != nil {
			return nil, err
		}
	}
	return w, nil
}

// resident is w, interleaved first if it waits for its first product.
func (d *Device) resident(w backend.Weight) *Weight {
	cw := weight(w)
	if cw.lazy != nil {
		if err := d.interleave(cw, cw.lazy); err != nil {
			// It was checked at Upload: keep the file's layout, which
			// works, and say so at the next Sync.
			cw.lazy = nil
			if d.err == nil {
				d.err = err
			}
		}
	}
	return cw
}

// NewKV implements backend.Device.
func (d *Device) NewKV(s backend.KVSpec) (backend.KV, error) { return NewKV(s) }

// NewState implements backend.Device.
func (d *Device) NewState(n int) (backend.State, error) { return NewState(n), nil }

// Write implements backend.Device.
func (d *Device) Write(dst backend.Buf, src []float32) { copy(host(dst), src) }

// Read implements backend.Device.
func (d *Device) Read(dst []float32, src backend.Buf) { copy(dst, host(src)) }

// CopyRows implements backend.Device.
func (d *Device) CopyRows(dst backend.Buf, dstStride int, src backend.Buf, srcStride int, rows, cols int) {
	CopyRows(host(dst), dstStride, host(src), srcStride, rows, cols)
}

// CopyRows copies rows of cols values from src (row stride srcStride) to
// dst (row stride dstStride).
func CopyRows(dst []float32, dstStride int, src []float32, srcStride int, rows, cols int) {
	if rows > 0 && dstStride == cols && srcStride == cols {
		copy(dst[:rows*cols], src[:rows*cols])
		return
	}
	for i := range rows {
		copy(dst[i*dstStride:i*dstStride+cols], src[i*srcStride:i*srcStride+cols])
	}
}

// Embed implements backend.Device.
func (d *Device) Embed(dst backend.Buf, table backend.Weight, ids []int32) {
	if err := d.b.Embed(host(dst), weight(table).t, ids); err != nil && d.err == nil {
		d.err = err
	}
}

// MatMul implements backend.Device.
func (d *Device) MatMul(dst backend.Buf, w backend.Weight, x backend.Buf, n int) {
	cw := d.resident(w)
	d.b.matMul(host(dst), cw.t, cw.il, host(x), n)
}

// MatMulMulti implements backend.Device.
func (d *Device) MatMulMulti(dst []backend.Buf, w []backend.Weight, x backend.Buf, n int) {
	d.mdst, d.mw, d.mil = d.mdst[:0], d.mw[:0], d.mil[:0]
	for i := range dst {
		cw := d.resident(w[i])
		d.mdst = append(d.mdst, host(dst[i]))
		d.mw = append(d.mw, cw.t)
		d.mil = append(d.mil, cw.il)
	}
	d.b.matMulMulti(d.mdst, d.mw, d.mil, host(x), n)
	clear(d.mdst)
	clear(d.mil)
}

// RMSNorm implements backend.Device.
func (d *Device) RMSNorm(dst, x backend.Buf, w backend.Weight, eps float32) {
	d.b.RMSNorm(host(dst), host(x), values(w), eps)
}

// AddBias implements backend.Device.
func (d *Device) AddBias(x backend.Buf, b backend.Weight) { d.b.AddBias(host(x), values(b)) }

// RoPE implements backend.Device.
func (d *Device) RoPE(x backend.Buf, pos []int32, heads, headDim int, r *backend.Rope) {
	d.b.RoPE(host(x), pos, heads, headDim, r)
}

// StoreKV implements backend.Device.
func (d *Device) StoreKV(kv backend.KV, pos []int32, k, v backend.Buf) {
	kvOf(kv).Store(pos, host(k), host(v))
}

// Attend implements backend.Device.
func (d *Device) Attend(dst, q backend.Buf, kv backend.KV, pos []int32, a *backend.Attention, in backend.AttendInputs) {
	var g, sinks []float32
	if a.Gated {
		g = host(in.Gate)
	}
	if a.Sinks {
		sinks = values(in.Sinks)
	}
	d.b.Attend(host(dst), host(q), g, kvOf(kv), pos, a, sinks)
}

// SwiGLU implements backend.Device.
func (d *Device) SwiGLU(dst, gate, up backend.Buf) { d.b.SwiGLU(host(dst), host(gate), host(up)) }

// GeGLU implements backend.Device.
func (d *Device) GeGLU(dst, gate, up backend.Buf) { d.b.GeGLU(host(dst), host(gate), host(up)) }

// Scale implements backend.Device.
func (d *Device) Scale(x backend.Buf, s float32) { d.b.Scale(host(x), s) }

// SoftCap implements backend.Device.
func (d *Device) SoftCap(x backend.Buf, c float32) { d.b.SoftCap(host(x), c) }

// Add implements backend.Device.
func (d *Device) Add(dst, x backend.Buf) { d.b.Add(host(dst), host(x)) }

// Sync implements backend.Device: the operations ran already; it reports
// the first that failed since the last Sync. The CPU has no sticky
// failures.
func (d *Device) Sync() error {
	err := d.err
	d.err = nil
	return err
}

// Close implements backend.Device: it stops the worker threads and
// frees the interleaved weights (the device's weights must not be used
// after).
func (d *Device) Close() error {
	d.b.Close()
	if err := d.arena.Free(); err != nil {
		return fmt.Errorf("cpu: free interleaved weights: %w", err)
	}
	return nil
}

// DeltaNet implements backend.DeltaNetRunner.
func (d *Device) DeltaNet(dst, qkv, alpha, beta backend.Buf, st backend.State, n int, p *backend.DeltaNet) {
	s, ok := st.(*State)
	if !ok {
		panic(fmt.Sprintf("cpu: a state of another device (%T)", st))
	}
	if err := d.b.DeltaNet(host(dst), host(qkv), host(alpha), host(beta), s.b, n, p); err != nil && d.err == nil {
		d.err = err
	}
}

var (
	_ backend.Device         = (*Device)(nil)
	_ backend.DeltaNetRunner = (*Device)(nil)
)
