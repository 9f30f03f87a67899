// Package fake is a device for tests: it runs the CPU's kernels behind
// the device seam, so its results are the CPU's bit for bit, but it
// behaves the way a GPU does where a forward pass could get that wrong.
//
//   - Operations are queued and run only at Sync (or when cache rows are
//     read), so a host buffer given to Read holds NaNs until then: code
//     that reads results early sees garbage and fails its test.
//   - Host arguments (positions, ids, Write's source, parameters) are
//     copied when an operation is queued, as a GPU copies them at launch:
//     a caller that reuses them before Sync cannot change what runs.
//   - Buffers, weights and caches of another device are refused with a
//     panic, as a wrong device pointer is a bug.
//   - Memory is counted against a budget: weights (copied, as an upload
//     copies them), buffers and caches, and FreeBytes reports what is left.
//   - A fault can be injected: after FaultAfter operations the device
//     fails for good, as a GPU's sticky error does; Sync and cache reads
//     return ErrFault from then on.
//   - Weight types can be declared unsupported, for the planner.
//
// It is test support: the app never registers it.
package fake

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/churon/churon/engine/backend"
	"github.com/churon/churon/engine/backend/cpu"
	"github.com/churon/churon/engine/quant"
)

// ErrFault is the sticky failure an injected fault leaves.
var ErrFault = errors.New("fake: device fault (injected)")

// Options shape a fake device.
type Options struct {
	// Name is what Name returns; "fake GPU" by default.
	Name string
	// Budget is the device memory in bytes; 0 means unlimited (FreeBytes
	// then says -1).
	Budget int64
	// FaultAfter > 0 makes the FaultAfter-th operation fail, and the
	// device with it.
	FaultAfter int
	// Unsupported lists weight types Supports refuses.
	Unsupported []quant.Type
	// Threads for the kernels (0: the CPU default).
	Threads int
}

// Device is a fake accelerator. It is safe for concurrent use.
type Device struct {
	opt Options
	k   *cpu.Backend

	mu     sync.Mutex
	queue  []func()
	used   int64
	peak   int64
	ops    int
	fault  error
	closed bool
}

// New returns a fake device.
func New(opt Options) *Device {
	if opt.Name == "" {
		opt.Name = "fake GPU"
	}
	return &Device{opt: opt, k: cpu.New(opt.Threads)}
}

// Name implements backend.Device.
func (d *Device) Name() string { return d.opt.Name }

// Supports implements backend.Device.
func (d *Device) Supports(t quant.Type) bool {
	return quant.VecDotSupported(t) && !slices.Contains(d.opt.Unsupported, t)
}

// FreeBytes implements backend.Device.
func (d *Device) FreeBytes() int64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.opt.Budget == 0 {
		return -1
	}
	return d.opt.Budget - d.used
}

// Used is the device memory in use now, and Peak the most ever used.
func (d *Device) Used() (used, peak int64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.used, d.peak
}

// Ops is the number of operations queued so far.
func (d *Device) Ops() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.ops
}

// Faulted reports whether the device has failed.
func (d *Device) Faulted() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.fault != nil
}

// take reserves n bytes of the budget. The caller holds d.mu.
func (d *Device) take(n int64, what string) error {
	if err := d.unusable(); err != nil {
		return err
	}
	if d.opt.Budget > 0 && d.used+n > d.opt.Budget {
		return fmt.Errorf("%w: %s needs %d bytes, %d of %d free", backend.ErrOutOfMemory, what, n, d.opt.Budget-d.used, d.opt.Budget)
	}
	d.used += n
	d.peak = max(d.peak, d.used)
	return nil
}

func (d *Device) give(n int64) {
	d.mu.Lock()
	d.used -= n
	d.mu.Unlock()
}

// mem is an allocation of a fake device.
type mem struct {
	dev   *Device
	f     []float32
	freed bool // set when a Free reaches its turn in the queue
}

func (m *mem) Len() int { return len(m.f) }

// host is the memory of one of d's buffers.
func (d *Device) host(b backend.Buf) []float32 {
	m, ok := b.Mem().(*mem)
	if !ok || m.dev != d {
		panic(fmt.Sprintf("fake: %s got a buffer of another device (%T)", d.opt.Name, b.Mem()))
	}
	if m.freed {
		panic("fake: " + d.opt.Name + " got a buffer that was freed")
	}
	return m.f[b.Off() : b.Off()+b.Len()]
}

// Alloc implements backend.Device.
func (d *Device) Alloc(n int) (backend.Buf, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.take(4*int64(n), fmt.Sprintf("a buffer of %d values", n)); err != nil {
		return backend.Buf{}, err
	}
	f := make([]float32, n)
	for i := range f {
		f[i] = float32(math.NaN()) // memory from cudaMalloc is not zeroed
	}
	return backend.NewBuf(&mem{dev: d, f: f}), nil
}

// Free implements backend.Device. The memory counts as free at once
// (the next allocation may reuse it, as a stream-ordered allocator's
// does), and the buffer dies when the Free reaches its turn: operations
// queued before it still run, later ones using it panic.
func (d *Device) Free(b backend.Buf) {
	if b.Mem() == nil {
		return
	}
	m, ok := b.Mem().(*mem)
	if !ok || m.dev != d {
		panic(fmt.Sprintf("fake: %s asked to free a buffer of another device (%T)", d.opt.Name, b.Mem()))
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if m.freed {
		panic("fake: a buffer freed twice")
	}
	d.used -= 4 * int64(len(m.f))
	if d.closed || d.fault != nil {
		m.freed = true
		return
	}
	d.queue = append(d.queue, func() { m.freed = true })
}

// weight is a tensor uploaded to a fake device: a copy of its data.
type weight struct {
	dev *Device
	w   *cpu.Weight
}

func (w *weight) Tensor() *backend.Tensor { return w.w.Tensor() }

func (d *Device) weight(w backend.Weight) *cpu.Weight {
	fw, ok := w.(*weight)
	if !ok || fw.dev != d {
		panic(fmt.Sprintf("fake: %s got a weight of another device (%T)", d.opt.Name, w))
	}
	return fw.w
}

func (d *Device) values(w backend.Weight) []float32 {
	if w == nil {
		return nil
	}
	return d.weight(w).Values()
}

// Upload implements backend.Device: the tensor's bytes are copied, as
// into a GPU's memory.
func (d *Device) Upload(t *backend.Tensor) (backend.Weight, error) {
	if !t.IsVector() && !d.Supports(t.Type) {
		return nil, fmt.Errorf("%w: %s is %v", backend.ErrUnsupported, t.Name, t.Type)
	}
	n := int64(len(t.Data))
	if t.IsVector() {
		n = 4 * int64(t.Elements())
	}
	d.mu.Lock()
	err := d.take(n, t.Name)
	d.mu.Unlock()
	if err != nil {
		return nil, err
	}
	c := *t
	c.Data = bytes.Clone(t.Data)
	w, err := cpu.NewWeight(&c)
	if err != nil {
		d.give(n)
		return nil, err
	}
	return &weight{dev: d, w: w}, nil
}

// enqueue queues op, counting it towards an injected fault. Once the
// device has failed, nothing runs.
func (d *Device) enqueue(op func()) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		panic("fake: " + d.opt.Name + " used after Close")
	}
	if d.fault != nil {
		return
	}
	d.ops++
	if d.opt.FaultAfter > 0 && d.ops >= d.opt.FaultAfter {
		d.fault = ErrFault
		d.queue = nil
		return
	}
	d.queue = append(d.queue, op)
}

// run runs the queue. The caller holds d.mu.
func (d *Device) run() error {
	q := d.queue
	d.queue = nil
	if d.fault == nil {
		for _, op := range q {
			op()
		}
	}
	return d.fault
}

// Sync implements backend.Device: it runs the queued operations in
// order and returns the device's failure, if it has failed.
func (d *Device) Sync() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.run()
}

// Close implements backend.Device.
func (d *Device) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.closed {
		d.closed = true
		d.queue = nil
		d.k.Close()
	}
	return nil
}

// Write implements backend.Device.
func (d *Device) Write(dst backend.Buf, src []float32) {
	h, s := d.host(dst), slices.Clone(src)
	d.enqueue(func() { copy(h, s) })
}

// Read implements backend.Device: dst holds NaNs until Sync.
func (d *Device) Read(dst []float32, src backend.Buf) {
	h := d.host(src)
	for i := range dst {
		dst[i] = float32(math.NaN())
	}
	d.enqueue(func() { copy(dst, h) })
}

// CopyRows implements backend.Device.
func (d *Device) CopyRows(dst backend.Buf, dstStride int, src backend.Buf, srcStride int, rows, cols int) {
	hd, hs := d.host(dst), d.host(src)
	d.enqueue(func() { cpu.CopyRows(hd, dstStride, hs, srcStride, rows, cols) })
}

// Embed implements backend.Device.
func (d *Device) Embed(dst backend.Buf, table backend.Weight, ids []int32) {
	h, t, ids := d.host(dst), d.weight(table).Tensor(), slices.Clone(ids)
	d.enqueue(func() {
		if err := d.k.Embed(h, t, ids); err != nil {
			panic(err) // the engine checks ids before a pass
		}
	})
}

// MatMul implements backend.Device.
func (d *Device) MatMul(dst backend.Buf, w backend.Weight, x backend.Buf, n int) {
	hd, t, hx := d.host(dst), d.weight(w).Tensor(), d.host(x)
	d.enqueue(func() { d.k.MatMul(hd, t, hx, n) })
}

// MatMulMulti implements backend.Device.
func (d *Device) MatMulMulti(dst []backend.Buf, w []backend.Weight, x backend.Buf, n int) {
	hd := make([][]float32, len(dst))
	ts := make([]*backend.Tensor, len(w))
	for i := range dst {
		hd[i] = d.host(dst[i])
		ts[i] = d.weight(w[i]).Tensor()
	}
	hx := d.host(x)
	d.enqueue(func() { d.k.MatMulMulti(hd, ts, hx, n) })
}

// RMSNorm implements backend.Device.
func (d *Device) RMSNorm(dst, x backend.Buf, w backend.Weight, eps float32) {
	hd, hx, v := d.host(dst), d.host(x), d.values(w)
	d.enqueue(func() { d.k.RMSNorm(hd, hx, v, eps) })
}

// AddBias implements backend.Device.
func (d *Device) AddBias(x backend.Buf, b backend.Weight) {
	hx, v := d.host(x), d.values(b)
	d.enqueue(func() { d.k.AddBias(hx, v) })
}

// RoPE implements backend.Device.
func (d *Device) RoPE(x backend.Buf, pos []int32, heads, headDim int, r *backend.Rope) {
	hx, p, rc := d.host(x), slices.Clone(pos), *r
	d.enqueue(func() { d.k.RoPE(hx, p, heads, headDim, &rc) })
}

// StoreKV implements backend.Device.
func (d *Device) StoreKV(kv backend.KV, pos []int32, k, v backend.Buf) {
	c, p, hk, hv := d.kv(kv), slices.Clone(pos), d.host(k), d.host(v)
	d.enqueue(func() { c.Store(p, hk, hv) })
}

// Attend implements backend.Device.
func (d *Device) Attend(dst, q backend.Buf, kv backend.KV, pos []int32, a *backend.Attention, in backend.AttendInputs) {
	hd, hq, c, p, ac := d.host(dst), d.host(q), d.kv(kv), slices.Clone(pos), *a
	var g, sinks []float32
	if a.Gated {
		g = d.host(in.Gate)
	}
	if a.Sinks {
		sinks = d.values(in.Sinks)
	}
	d.enqueue(func() { d.k.Attend(hd, hq, g, c, p, &ac, sinks) })
}

// SwiGLU implements backend.Device.
func (d *Device) SwiGLU(dst, gate, up backend.Buf) {
	hd, hg, hu := d.host(dst), d.host(gate), d.host(up)
	d.enqueue(func() { d.k.SwiGLU(hd, hg, hu) })
}

// GeGLU implements backend.Device.
func (d *Device) GeGLU(dst, gate, up backend.Buf) {
	hd, hg, hu := d.host(dst), d.host(gate), d.host(up)
	d.enqueue(func() { d.k.GeGLU(hd, hg, hu) })
}

// Scale implements backend.Device.
func (d *Device) Scale(x backend.Buf, s float32) {
	hx := d.host(x)
	d.enqueue(func() { d.k.Scale(hx, s) })
}

// SoftCap implements backend.Device.
func (d *Device) SoftCap(x backend.Buf, c float32) {
	hx := d.host(x)
	d.enqueue(func() { d.k.SoftCap(hx, c) })
}

// Add implements backend.Device.
func (d *Device) Add(dst, x backend.Buf) {
	hd, hx := d.host(dst), d.host(x)
	d.enqueue(func() { d.k.Add(hd, hx) })
}

var _ backend.Device = (*Device)(nil)
