package metal

import (
	"errors"
	"unsafe"
)

// runner is what the device needs of Metal: the darwin runner drives
// Metal.framework, the tests' runner the emulator (emu/).
//
// A runner is used by one goroutine at a time (the device's owner);
// free may also come from a KV release on another goroutine, which the
// device serialises itself.
type runner interface {
	// info describes the GPU.
	info() Info
	// pipelines makes the compute pipeline of every kernel named, in
	// order: dispatch's k indexes them.
	pipelines(names []string) error
	// alloc returns a buffer of n bytes of shared storage (contents
	// undefined).
	alloc(n int) (rbuf, error)
	// wrap makes a buffer of the host memory [p, p+n) without a copy;
	// p and n are multiples of the page size. errNoWrap: not possible.
	wrap(p unsafe.Pointer, n int) (rbuf, error)
	// free releases a buffer; nothing queued may use it any more.
	free(b rbuf)
	// dispatch encodes kernel k over grid threadgroups of tg threads:
	// params (copied now) at buffer index 0, binds at 1, 2, ….
	dispatch(k int, grid, tg [3]uint32, params []uint32, binds []bind)
	// wait commits what is encoded and waits for every command buffer,
	// returning the first failure.
	wait() error
	// close releases the runner; every buffer is freed before.
	close()
}

var errNoWrap = errors.New("metal: memory cannot be wrapped")

// rbuf is a runner's buffer: its handle (the MTLBuffer, or the
// emulator's pointer) and its contents in host memory.
type rbuf struct {
	h uintptr
	p unsafe.Pointer
	n int
}

// bind is a buffer binding: a buffer and a byte offset into it.
type bind struct {
	h   uintptr
	off int
}

func (b rbuf) at(off int) bind { return bind{h: b.h, off: off} }

// bytes is the buffer's contents.
func (b rbuf) bytes() []byte {
	if b.n == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(b.p), b.n)
}

// Info describes a Metal GPU.
type Info struct {
	Name string // "Apple M3 Pro"
	// WorkingSet is Metal's recommendedMaxWorkingSetSize: how much memory
	// the GPU can use without hurting the system (0: unknown).
	WorkingSet int64
	// MaxBuffer is the largest buffer (maxBufferLength).
	MaxBuffer int64
	// Language is the Metal Shading Language version the kernels were
	// compiled for, as read back from the compile options ("3.0").
	Language string
	// Unified reports unified memory (hasUnifiedMemory): every Apple
	// silicon GPU.
	Unified bool
	// Family is the highest Apple GPU family supported ("Apple9"), or "".
	Family string
}

// Label is the GPU as the device names it.
func (in Info) Label() string { return in.Name }
