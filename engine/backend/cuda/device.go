//go:build linux || windows

package cuda

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

// Device is an NVIDIA GPU as a backend.Device.
//
// Operations are recorded as commands (a kernel and its arguments, or a
// copy) and handed to the context's executor in batches, which launches
// them on the device's stream: the caller never waits for the GPU, and
// for the executor's thread once per batch, not per operation. Host
// arguments (positions, row indices, RoPE tables, Write's source) are
// copied into pinned staging memory when the operation is recorded and
// reach the device by asynchronous copies in stream order; Read's values
// land in staging and are copied to their destination at Sync. Staging,
// and the device memory the copied arguments go to, are reused after
// each Sync.
//
// A failed launch or copy is kept and returned by the next Sync; a
// sticky failure (a kernel fault) also marks the context dead, after
// which every Sync fails and nothing more is launched.
type Device struct {
	g      *gpu
	stream uintptr
	label  string

	gpucommon.MatMuls[*Weight] // MatMul, MatMulMulti and MatMulEach, which run d.matmuls

	cmds     []cmd
	launches int64  // kernels launched, for benchmarks
	issueF   func() // d.issue, made once: the executor takes a func
	waitF    func()
	err      error // the first failure since the last Sync
	closed   bool

	host   stager // pinned host staging
	params arena  // device memory for host arguments
	reads  []pendingRead

	acts    [gpucommon.NumActs]scratch  // activations rounded for the matrix products
	scores  scratch                     // attention scores
	rope    gpucommon.RopeTable[uint64] // the last RoPE table, at its address in ropeDev
	ropeDev scratch
	gelu    uint64 // ggml's F16 GELU table, for GeGLU

	// upload's double buffer: pinned host memory and an event each
	upBuf [2]uintptr
	upEv  [2]uintptr

	allocs gpucommon.Allocs[uint64] // every allocation not yet freed, and those to free after the next Sync
}

// opKind is what a command does.
type opKind uint8

const (
	opLaunch   opKind = iota
	opHtoD            // args: device dst, host src, bytes
	opDtoH            // args: host dst, device src, bytes
	opDtoD            // args: device dst, device src, bytes
	opMemset32        // args: device dst, value, count
)

type cmd struct {
	op          opKind
	k           gpucommon.Kernel
	grid, block [3]uint32
	nargs       int
	args        [maxArgs]uint64
}

// cmdBatch is how many commands are handed to the executor at once.
const cmdBatch = 256

// New opens the GPU CUDA would use (CHURON_CUDA_DEVICE, else the first)
// as a device, or says in one line why there is none.
func New() (*Device, error) {
	ord, err := deviceOrdinal()
	if err != nil {
		return nil, err
	}
	g, err := openGPU(ord)
	if err != nil {
		return nil, err
	}
	d := &Device{g: g, label: "CUDA · " + g.info.Label()}
	d.MatMuls = gpucommon.NewMatMuls("cuda", d.weight, d.matmuls)
	d.issueF = d.issue
	d.waitF = d.wait
	var serr error
	g.exec.do(func() {
		if serr = g.drv.call(cuStreamCreate, uintptr(unsafe.Pointer(&d.stream)), 0); serr != nil {
			return
		}
		for i := range d.upEv {
			if serr = g.drv.call(cuEventCreate, uintptr(unsafe.Pointer(&d.upEv[i])), 2 /* CU_EVENT_DISABLE_TIMING */); serr != nil {
				return
			}
		}
	})
	if serr != nil {
		g.release()
		return nil, fmt.Errorf("CUDA on %s: %w", g.info.Name, serr)
	}
	// The GELU table GeGLU looks values up in: the CPU's own.
	tab := cpu.GELUTable()
	if d.gelu, err = d.alloc(int64(2*len(tab)), "the GELU table"); err == nil {
		err = d.copyIn(d.gelu, unsafe.Slice((*byte)(unsafe.Pointer(&tab[0])), 2*len(tab)))
	}
	if err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

// Info describes the GPU.
func (d *Device) Info() Info { return d.g.info }

// Name implements backend.Device: "CUDA · NVIDIA GeForce RTX 4070 (sm_89,
// driver 550.54)".
func (d *Device) Name() string { return d.label }

// Supports implements backend.Device: the weight types the matrix
// kernels multiply.
func (d *Device) Supports(t quant.Type) bool {
	return gpucommon.Supports(t)
}

// reserveBytes is what FreeBytes keeps back of the device's free memory:
// what the driver, other programs' growth and this backend's own scratch
// (attention scores, rounded activations, staging targets) need.
func reserveBytes(total int64) int64 {
	return max(512<<20, total/20) + int64(gpucommon.ScoreBudget) + 64<<20
}

// FreeBytes implements backend.Device.
func (d *Device) FreeBytes() int64 {
	var free, total uint64
	var err error
	d.g.exec.do(func() {
		err = d.g.drv.call(cuMemGetInfo, uintptr(unsafe.Pointer(&free)), uintptr(unsafe.Pointer(&total)))
	})
	if err != nil {
		return 0
	}
	return max(0, int64(free)-reserveBytes(int64(total)))
}

// Used is the device memory this Device holds now, in bytes.
func (d *Device) Used() int64 { return d.allocs.Used() }

// mem is an allocation of the device: what its Bufs view.
type mem = gpucommon.Mem[*Device, uint64]

// ptr is the device address of a buffer of this device.
func (d *Device) ptr(b backend.Buf) uint64 {
	return gpucommon.MemOf[*Device, uint64]("cuda", d.label, d, b).At + 4*uint64(b.Off())
}

var errOOM = backend.ErrOutOfMemory

// alloc allocates n bytes of device memory.
func (d *Device) alloc(n int64, what string) (uint64, error) {
	if err := d.usable(); err != nil {
		return 0, err
	}
	var p uint64
	var err error
	d.g.exec.do(func() { err = d.g.drv.call(cuMemAlloc, uintptr(unsafe.Pointer(&p)), uintptr(n)) })
	if err != nil {
		d.g.fail(err)
		if errors.Is(err, errOOM) {
			return 0, fmt.Errorf("%w: %s needs %d MiB on %s: %v", errOOM, what, (n+(1<<20)-1)>>20, d.g.info.Name, err)
		}
		return 0, fmt.Errorf("%s: %w", what, err)
	}
	d.allocs.Add(p, n)
	return p, nil
}

// freeLater frees p after the next Sync, when no queued work uses it.
func (d *Device) freeLater(p uint64) { d.allocs.FreeLater(p) }

// usable says why nothing more can run, if nothing can.
func (d *Device) usable() error {
	if d.closed {
		return gpucommon.ErrClosed("cuda")
	}
	return d.g.failure()
}

// Alloc implements backend.Device.
func (d *Device) Alloc(n int) (backend.Buf, error) {
	p, err := d.alloc(4*int64(max(n, 1)), fmt.Sprintf("a buffer of %d values", n))
	if err != nil {
		return backend.Buf{}, err
	}
	return backend.NewBuf(&mem{Dev: d, At: p, N: n}), nil
}

// Free implements backend.Device: the memory goes back after the next
// Sync, so that work queued before still has it.
func (d *Device) Free(b backend.Buf) {
	if p, ok := gpucommon.FreeMem[*Device, uint64]("cuda", d.label, d, b); ok {
		d.freeLater(p)
	}
}

// record adds a command, handing the batch to the executor when it is
// full.
func (d *Device) record(c cmd) {
	if d.closed {
		panic("cuda: " + d.label + " used after Close")
	}
	d.cmds = append(d.cmds, c)
	if len(d.cmds) >= cmdBatch {
		d.g.exec.do(d.issueF)
	}
}

// launch records kernel k over grid blocks of block threads.
func (d *Device) launch(k gpucommon.Kernel, grid, block [3]uint32, args ...uint64) {
	if len(args) > maxArgs {
		panic(fmt.Sprintf("cuda: %s takes %d arguments, more than %d", gpucommon.KernelNames[k], len(args), maxArgs))
	}
	c := cmd{op: opLaunch, k: k, grid: grid, block: block, nargs: len(args)}
	copy(c.args[:], args)
	d.record(c)
}

// launch1 launches k over n elements with a grid-stride loop.
func (d *Device) launch1(k gpucommon.Kernel, n int, args ...uint64) {
	if n <= 0 {
		return
	}
	blocks := min((n+255)/256, 8192)
	d.launch(k, [3]uint32{uint32(blocks), 1, 1}, [3]uint32{256, 1, 1}, args...)
}

func f32(v float32) uint64 { return uint64(math.Float32bits(v)) }
func i32(v int) uint64     { return uint64(uint32(int32(v))) }
func i64(v int) uint64     { return uint64(int64(v)) }

// issue launches the recorded commands on the stream. It runs on the
// executor.
func (d *Device) issue() {
	drv := d.g.drv
	args := hostBytes(d.g.args, 8*maxArgs)
	for i := range d.cmds {
		if d.err != nil {
			break
		}
		c := &d.cmds[i]
		var err error
		switch c.op {
		case opLaunch:
			for j := range c.nargs {
				putU64(args[8*j:], c.args[j])
			}
			d.launches++
			err = drv.call(cuLaunchKernel, d.g.fn[c.k],
				uintptr(c.grid[0]), uintptr(c.grid[1]), uintptr(c.grid[2]),
				uintptr(c.block[0]), uintptr(c.block[1]), uintptr(c.block[2]),
				0, d.stream, d.g.args+argPtrs, 0)
			if err != nil {
				err = fmt.Errorf("launching %s: %w", gpucommon.KernelNames[c.k], err)
			}
		case opHtoD:
			err = drv.call(cuMemcpyHtoDAsync, uintptr(c.args[0]), uintptr(c.args[1]), uintptr(c.args[2]), d.stream)
		case opDtoH:
			err = drv.call(cuMemcpyDtoHAsync, uintptr(c.args[0]), uintptr(c.args[1]), uintptr(c.args[2]), d.stream)
		case opDtoD:
			err = drv.call(cuMemcpyDtoDAsync, uintptr(c.args[0]), uintptr(c.args[1]), uintptr(c.args[2]), d.stream)
		case opMemset32:
			err = drv.call(cuMemsetD32Async, uintptr(c.args[0]), uintptr(c.args[1]), uintptr(c.args[2]), d.stream)
		}
		if err != nil {
			d.err = err
			d.g.fail(err)
		}
	}
	d.cmds = d.cmds[:0]
}

// wait issues what is recorded and waits for the stream. It runs on the
// executor.
func (d *Device) wait() {
	if d.g.failure() == nil {
		d.issue()
	}
	d.cmds = d.cmds[:0]
	if err := d.g.drv.call(cuStreamSynchronize, d.stream); err != nil {
		d.g.fail(err)
		d.failOp(err)
	}
}

// drain waits for everything queued, delivers the Reads, frees what was
// freed and starts staging anew. Errors stay for the next Sync.
func (d *Device) drain() {
	d.g.exec.do(d.waitF)
	ok := d.err == nil && d.g.failure() == nil
	for _, r := range d.reads {
		if ok && len(r.dst) > 0 {
			copy(r.dst, unsafe.Slice((*float32)(unsafe.Pointer(&hostBytes(r.src, 4*len(r.dst))[0])), len(r.dst)))
		}
	}
	clear(d.reads)
	d.reads = d.reads[:0]
	if frees := d.allocs.Freed(); len(frees) > 0 {
		d.g.exec.do(func() {
			for _, p := range frees {
				_ = d.g.drv.call(cuMemFree, uintptr(p))
			}
		})
	}
	d.host.reset()
	d.params.used = 0
}

// Sync implements backend.Device.
func (d *Device) Sync() error {
	if d.closed {
		return gpucommon.ErrClosed("cuda")
	}
	d.drain()
	return gpucommon.SyncErr(&d.err, d.g.failure())
}

// Close implements backend.Device: everything the device made is freed,
// and the context with the last device on it.
func (d *Device) Close() error {
	if d.closed {
		return nil
	}
	if d.g.failure() == nil {
		d.drain()
	}
	// Everything not yet freed goes now: weights, tables, scratch, and
	// whatever buffers and caches their owners have not given back (their
	// Free and Release do nothing after Close).
	d.closed = true
	frees := d.allocs.Close()
	d.g.exec.do(func() {
		drv := d.g.drv
		for _, p := range frees {
			_ = drv.call(cuMemFree, uintptr(p))
		}
		for _, p := range d.host.chunks {
			_ = drv.call(cuMemFreeHost, p.ptr)
		}
		for i := range d.upBuf {
			if d.upBuf[i] != 0 {
				_ = drv.call(cuMemFreeHost, d.upBuf[i])
			}
			if d.upEv[i] != 0 {
				_ = drv.call(cuEventDestroy, d.upEv[i])
			}
		}
		if d.stream != 0 {
			_ = drv.call(cuStreamDestroy, d.stream)
		}
	})
	d.host.chunks = nil
	d.g.release()
	return nil
}

var _ backend.Device = (*Device)(nil)
