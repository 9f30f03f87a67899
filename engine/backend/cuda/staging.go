//go:build linux || windows

package cuda

import (
	"fmt"
	"unsafe"

	"github.com/churon/churon/engine/backend"
	"github.com/churon/churon/engine/backend/internal/gpucommon"
)

// stager hands out pinned host memory for the host side of asynchronous
// copies, in chunks kept for the device's life and reused after each
// Sync (or drain, when they fill up).
type stager struct {
	chunks []chunk
	total  int
}

type chunk struct {
	ptr        uintptr
	size, used int
}

const (
	stageChunk = 8 << 20
	// stageLimit is the pinned memory a device may hold for staging
	// before it waits for its queue to reuse it.
	stageLimit = 256 << 20
)

// fits reports whether a chunk has n bytes left.
func (s *stager) fits(n int) bool {
	for _, c := range s.chunks {
		if c.size-c.used >= n {
			return true
		}
	}
	return false
}

func (s *stager) reset() {
	for i := range s.chunks {
		s.chunks[i].used = 0
	}
}

// stage returns n bytes of pinned host memory (16-byte aligned) valid
// until the next drain.
func (d *Device) stage(n int) (uintptr, []byte) {
	need := (n + 15) &^ 15
	for pass := 0; ; pass++ {
		for i := range d.host.chunks {
			c := &d.host.chunks[i]
			if c.size-c.used >= need {
				p := c.ptr + uintptr(c.used)
				c.used += need
				return p, hostBytes(p, n)
			}
		}
		if pass == 0 && d.host.total+max(stageChunk, need) > stageLimit {
			// Full: wait for what uses it, then reuse it.
			d.drain()
			continue
		}
		size := max(stageChunk, need)
		var p uintptr
		var err error
		d.g.exec.do(func() { err = d.g.drv.call(cuMemAllocHost, uintptr(unsafe.Pointer(&p)), uintptr(size)) })
		if err != nil {
			// Pinned memory is a host resource; without it nothing can
			// reach the GPU, which is this device's failure.
			panic(fmt.Sprintf("cuda: %d MiB of pinned host memory for staging: %v", size>>20, err))
		}
		d.host.chunks = append(d.host.chunks, chunk{ptr: p, size: size})
		d.host.total += size
	}
}

// arena is device memory for the host arguments of kernels (positions,
// row indices), bump-allocated and reused after each drain.
type arena struct {
	ptr        uint64
	size, used int
}

const arenaMin = 1 << 20

// toDevice copies host arguments (copied before it returns) to device
// memory valid for the kernels queued until the next drain, and returns
// their addresses (0 after a failure, which Sync reports). The room for
// all of them is made first: a drain between two of them would hand the
// first one's memory out again.
func (d *Device) toDevice(bs ...[]byte) [2]uint64 {
	var out [2]uint64
	need, total := 0, 0
	for _, b := range bs {
		need += (len(b) + 255) &^ 255
		total += (len(b) + 15) &^ 15
	}
	a := &d.params
	if (a.used+need > a.size && a.used > 0) || !d.host.fits(total) && d.host.total+max(stageChunk, total) > stageLimit {
		d.drain()
	}
	if need > a.size {
		d.freeLater(a.ptr)
		size := max(arenaMin, 2*need)
		p, err := d.alloc(int64(size), "kernel arguments")
		if err != nil {
			d.failOp(err)
			*a = arena{}
			return out
		}
		*a = arena{ptr: p, size: size}
	}
	src, buf := d.stage(total) // fits now: no drain
	off := 0
	for i, b := range bs {
		dst := a.ptr + uint64(a.used)
		a.used += (len(b) + 255) &^ 255
		copy(buf[off:], b)
		d.record(cmd{op: opHtoD, nargs: 3, args: [maxArgs]uint64{dst, uint64(src) + uint64(off), uint64(len(b))}})
		off += (len(b) + 15) &^ 15
		out[i] = dst
	}
	return out
}

// int32s views v as bytes.
func int32s(v []int32) []byte {
	if len(v) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), 4*len(v))
}

func floats(v []float32) []byte {
	if len(v) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), 4*len(v))
}

// failOp records a failure of an operation for the next Sync.
func (d *Device) failOp(err error) {
	gpucommon.KeepFirst(&d.err, err)
}

// pendingRead is a Read waiting for Sync: values in staging at src.
type pendingRead struct {
	dst []float32
	src uintptr
}

// scratch is device memory a device keeps for its own use, grown as
// needed; what it outgrows is freed after the next Sync.
type scratch struct {
	ptr  uint64
	size int64
}

// ensure makes s at least n bytes and returns its address (0 and a
// recorded failure when the device has no room).
func (d *Device) ensure(s *scratch, n int64, what string) uint64 {
	if s.size >= n {
		return s.ptr
	}
	d.freeLater(s.ptr)
	*s = scratch{}
	size := max(n+n/4, 1<<16)
	p, err := d.alloc(size, what)
	if err != nil {
		d.failOp(err)
		return 0
	}
	*s = scratch{ptr: p, size: size}
	return p
}

// ropeTable returns the device address of the (cos, sin) table for pos
// and r (gpucommon.RopeTable), uploaded into d.ropeDev when it is not the
// last one's.
func (d *Device) ropeTable(pos []int32, r *backend.Rope) uint64 {
	if p, ok := d.rope.Kept(pos, r); ok {
		return p
	}
	host := d.rope.Make(pos, r)
	p := d.ensure(&d.ropeDev, 4*int64(len(host)), "the RoPE table")
	if p == 0 {
		return 0
	}
	src, buf := d.stage(4 * len(host))
	copy(buf, floats(host))
	d.record(cmd{op: opHtoD, nargs: 3, args: [maxArgs]uint64{p, uint64(src), uint64(4 * len(host))}})
	d.rope.Keep(p)
	return p
}

// copyIn copies host memory to the device, synchronously, through the
// pinned double buffer: the next chunk is copied into one half while the
// other's transfer runs.
func (d *Device) copyIn(dst uint64, src []byte) error {
	if len(src) == 0 {
		return nil
	}
	const half = 8 << 20
	var err error
	d.g.exec.do(func() {
		// What was recorded before comes first.
		d.issue()
		drv := d.g.drv
		for i := range d.upBuf {
			if d.upBuf[i] == 0 {
				if err = drv.call(cuMemAllocHost, uintptr(unsafe.Pointer(&d.upBuf[i])), half); err != nil {
					return
				}
			}
		}
		var used [2]bool
		for off, i := 0, 0; off < len(src); off, i = off+half, i^1 {
			n := min(half, len(src)-off)
			if used[i] {
				if err = drv.call(cuEventSynchronize, d.upEv[i]); err != nil {
					return
				}
			}
			copy(hostBytes(d.upBuf[i], n), src[off:off+n])
			if err = drv.call(cuMemcpyHtoDAsync, uintptr(dst)+uintptr(off), d.upBuf[i], uintptr(n), d.stream); err != nil {
				return
			}
			if err = drv.call(cuEventRecord, d.upEv[i], d.stream); err != nil {
				return
			}
			used[i] = true
		}
		err = drv.call(cuStreamSynchronize, d.stream)
	})
	if err != nil {
		d.g.fail(err)
	}
	return err
}
