package metal

import (
	"errors"
	"fmt"
	"math"
	"unsafe"

	"github.com/churon/churon/engine/backend"
	"github.com/churon/churon/engine/backend/cpu"
	"github.com/churon/churon/engine/backend/internal/gpucommon"
	"github.com/churon/churon/engine/quant"
)

// Device is an Apple GPU as a backend.Device.
//
// Every operation is encoded as a dispatch into the runner's command
// buffer as it is called, and nothing runs until Sync (or a call that
// must see results: a cache read) commits and waits: a forward pass is
// one batch of command buffers. Host arguments (positions, row indices,
// RoPE tables, Write's source) are copied into staging buffers of shared
// memory when the operation is recorded and bound from there; Read's
// values land in staging and are copied to their destination at Sync.
// Staging is reused after each wait.
//
// A command buffer that fails (a GPU fault, a timeout, an error Metal
// reports) is returned by the next Sync and marks the device dead: every
// later Sync fails with it and the engine moves the model to the CPU.
type Device struct {
	r     runner
	in    Info
	label string

	gpucommon.MatMuls[*Weight] // MatMul, MatMulMulti and MatMulEach, which run d.matmuls

	dispatches int64 // kernels dispatched, for benchmarks
	err        error // the first failure since the last Sync
	dead       error // a failure that ends the device
	closed     bool
	pending    bool // something encoded since the last wait

	stage  stager
	reads  []pendingRead
	acts   [gpucommon.NumActs]scratch
	scores scratch
	rope   gpucommon.RopeTable[bind] // the last RoPE table, staged until the next wait
	gelu   rbuf                      // ggml's F16 GELU table, for GeGLU

	allocs gpucommon.Allocs[uintptr] // every buffer not yet freed, and those to free after the next wait
}

type pendingRead struct {
	dst []float32
	src []byte
}

// openRunner opens the system's Metal runner (metal_darwin.go; elsewhere
// none). Tests replace it with the emulated one.
var openRunner = openSystem

// errNotAvailable is why there is no Metal off a Mac. Reasons read after
// the backend's name ("metal: …") and are cut at their first colon in the
// status line, so none starts with "Metal:".
var errNotAvailable = errors.New("not available on this system (Metal runs on macOS)")

// New opens the system's default Metal device, or says in one line why
// there is none.
func New() (*Device, error) {
	r, err := openRunner()
	if err != nil {
		return nil, err
	}
	return newDevice(r)
}

func newDevice(r runner) (*Device, error) {
	if err := r.pipelines(kernelNames[:]); err != nil {
		r.close()
		return nil, err
	}
	in := r.info()
	d := &Device{r: r, in: in, label: "Metal · " + in.Label()}
	d.MatMuls = gpucommon.NewMatMuls("metal", d.weight, d.matmuls)
	tab := cpu.GELUTable()
	g, err := d.alloc(2*len(tab), "the GELU table")
	if err != nil {
		d.Close()
		return nil, err
	}
	copy(g.bytes(), gpucommon.BytesOf(tab))
	d.gelu = g
	return d, nil
}

// Info describes the GPU.
func (d *Device) Info() Info { return d.in }

// Name implements backend.Device: "Metal · Apple M3 Pro".
func (d *Device) Name() string { return d.label }

// Supports implements backend.Device: the weight types the matrix
// kernels multiply.
func (d *Device) Supports(t quant.Type) bool {
	return gpucommon.Supports(t)
}

// reserveBytes is what FreeBytes keeps back of the working set: the
// backend's scratch (attention scores, rounded activations, staging) and
// a margin for the system.
func reserveBytes(ws int64) int64 { return max(256<<20, ws/20) + int64(gpucommon.ScoreBudget) + 64<<20 }

// FreeBytes implements backend.Device: what is left of Metal's
// recommended working set, less a reserve. The planner then puts every
// layer on the GPU when the model fits it.
func (d *Device) FreeBytes() int64 {
	if d.in.WorkingSet <= 0 {
		return -1
	}
	return max(0, d.in.WorkingSet-d.Used()-reserveBytes(d.in.WorkingSet))
}

// Used is the memory this Device holds now, in bytes.
func (d *Device) Used() int64 { return d.allocs.Used() }

// Dispatches is the number of kernels dispatched so far.
func (d *Device) Dispatches() int64 { return d.dispatches }

// mem is a buffer of the device: what its Bufs view.
type mem = gpucommon.Mem[*Device, rbuf]

// buf is the binding of a buffer of this device at its view's start.
func (d *Device) buf(b backend.Buf) bind {
	return gpucommon.MemOf[*Device, rbuf]("metal", d.label, d, b).At.at(4 * b.Off())
}

var errOOM = backend.ErrOutOfMemory

// alloc makes a buffer of n bytes.
func (d *Device) alloc(n int, what string) (rbuf, error) {
	if err := d.usable(); err != nil {
		return rbuf{}, err
	}
	if mb := d.in.MaxBuffer; mb > 0 && int64(n) > mb {
		return rbuf{}, fmt.Errorf("%w: %s needs %d MiB, more than the largest Metal buffer (%d MiB)", errOOM, what, n>>20, mb>>20)
	}
	b, err := d.r.alloc(max(n, 16))
	if err != nil {
		return rbuf{}, fmt.Errorf("%w: %s needs %d MiB on %s: %v", errOOM, what, (n+(1<<20)-1)>>20, d.in.Name, err)
	}
	d.track(b)
	return b, nil
}

func (d *Device) track(b rbuf) { d.allocs.Add(b.h, int64(b.n)) }

// freeLater frees b after the next wait, when nothing queued uses it.
func (d *Device) freeLater(b rbuf) { d.allocs.FreeLater(b.h) }

// usable says why nothing more can run, if nothing can.
func (d *Device) usable() error {
	if d.closed {
		return gpucommon.ErrClosed("metal")
	}
	return d.dead
}

// Alloc implements backend.Device.
func (d *Device) Alloc(n int) (backend.Buf, error) {
	b, err := d.alloc(4*max(n, 1), fmt.Sprintf("a buffer of %d values", n))
	if err != nil {
		return backend.Buf{}, err
	}
	return backend.NewBuf(&mem{Dev: d, At: b, N: n}), nil
}

// Free implements backend.Device: the memory goes back after the next
// wait, so that work encoded before still has it.
func (d *Device) Free(b backend.Buf) {
	if m, ok := gpucommon.FreeMem[*Device, rbuf]("metal", d.label, d, b); ok {
		d.freeLater(m)
	}
}

// launch encodes kernel k over grid threadgroups of tg threads.
func (d *Device) launch(k gpucommon.Kernel, grid, tg [3]uint32, params []uint32, binds ...bind) {
	if d.closed {
		panic("metal: " + d.label + " used after Close")
	}
	if d.dead != nil || grid[0] == 0 || grid[1] == 0 || grid[2] == 0 {
		return
	}
	d.dispatches++
	d.pending = true
	d.r.dispatch(int(k), grid, tg, params, binds)
}

// launch1 encodes k over n threads in threadgroups of 256.
func (d *Device) launch1(k gpucommon.Kernel, n int, params []uint32, binds ...bind) {
	if n <= 0 {
		return
	}
	d.launch(k, [3]uint32{uint32((n + 255) / 256), 1, 1}, [3]uint32{256, 1, 1}, params, binds...)
}

func f32(v float32) uint32 { return math.Float32bits(v) }
func i32(v int) uint32     { return uint32(int32(v)) }
func b32(v bool) uint32 {
	if v {
		return 1
	}
	return 0
}

// drain waits for everything encoded, delivers the Reads, frees what was
// freed and starts staging anew. Errors stay for the next Sync.
func (d *Device) drain() {
	if d.pending || len(d.reads) > 0 {
		if err := d.r.wait(); err != nil && d.dead == nil {
			err = fmt.Errorf("metal: command buffer failed on %s: %w", d.in.Name, err)
			d.dead = err
			d.failOp(err)
		}
		d.pending = false
	}
	ok := d.err == nil && d.dead == nil
	for _, r := range d.reads {
		if ok {
			copy(r.dst, unsafe.Slice((*float32)(unsafe.Pointer(&r.src[0])), len(r.dst)))
		}
	}
	clear(d.reads)
	d.reads = d.reads[:0]
	for _, h := range d.allocs.Freed() {
		d.r.free(rbuf{h: h})
	}
	d.stage.reset()
	d.rope.Forget()
}

// Sync implements backend.Device.
func (d *Device) Sync() error {
	if d.closed {
		return gpucommon.ErrClosed("metal")
	}
	d.drain()
	return gpucommon.SyncErr(&d.err, d.dead)
}

// failOp records an operation's failure for the next Sync.
func (d *Device) failOp(err error) {
	gpucommon.KeepFirst(&d.err, err)
}

// Close implements backend.Device: everything the device made is freed,
// and the runner with it.
func (d *Device) Close() error {
	if d.closed {
		return nil
	}
	if d.dead == nil {
		d.drain()
	} else if d.pending {
		_ = d.r.wait()
	}
	d.closed = true
	for _, h := range d.allocs.Close() {
		d.r.free(rbuf{h: h})
	}
	d.stage.chunks = nil
	d.r.close()
	return nil
}

// stager hands out shared memory for host arguments in chunks kept for
// the device's life and reused after each wait.
type stager struct {
	chunks []stageChunk
	total  int
}

type stageChunk struct {
	b    rbuf
	used int
}

const (
	stageChunkBytes = 4 << 20
	stageLimit      = 256 << 20
)

func (s *stager) reset() {
	for i := range s.chunks {
		s.chunks[i].used = 0
	}
}

// staged returns n bytes of shared memory (16-byte aligned) valid until
// the next wait, and their binding.
func (d *Device) staged(n int) (bind, []byte) {
	need := (max(n, 1) + 15) &^ 15
	for pass := 0; ; pass++ {
		for i := range d.stage.chunks {
			c := &d.stage.chunks[i]
			if c.b.n-c.used >= need {
				off := c.used
				c.used += need
				return c.b.at(off), c.b.bytes()[off : off+n]
			}
		}
		if pass == 0 && d.stage.total+max(stageChunkBytes, need) > stageLimit {
			d.drain() // full: wait for what uses it, then reuse it
			continue
		}
		size := max(stageChunkBytes, need)
		b, err := d.alloc(size, "staging")
		if err != nil {
			// Without staging nothing reaches the GPU: the device's failure.
			if d.dead == nil {
				d.dead = err
			}
			d.failOp(err)
			tmp := make([]byte, n)
			return bind{}, tmp
		}
		d.stage.chunks = append(d.stage.chunks, stageChunk{b: b})
		d.stage.total += size
	}
}

// scratch is a device buffer kept and grown for one use.
type scratch struct {
	b rbuf
}

// ensure returns s's buffer with room for n bytes, growing it (the old
// one is freed after the next wait).
func (d *Device) ensure(s *scratch, n int, what string) (rbuf, bool) {
	if s.b.n >= n {
		return s.b, true
	}
	size := max(n, 2*s.b.n, 1<<16)
	b, err := d.alloc(size, what)
	if err != nil {
		d.failOp(err)
		return rbuf{}, false
	}
	d.freeLater(s.b)
	s.b = b
	return b, true
}

var _ backend.Device = (*Device)(nil)
