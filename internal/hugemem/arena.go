package hugemem

import (
	"runtime"
	"sync"
)

// HugePage is the size of the huge pages Alloc asks for: 2 MiB, the
// transparent huge page of amd64 and of arm64 with 4 KiB pages.
const HugePage = 2 << 20

// Arena hands out buffers that live as long as it does — a model's
// repacked weights — from a few large allocations. Each buffer of its
// own would leave a tail in small pages (Alloc aligns only its start),
// and a model's matrices are a few MiB each: packed end to end they lie
// in huge pages all but at the ends of each allocation. The zero Arena
// is ready to use; it is safe for concurrent use.
type Arena struct {
	mu    sync.Mutex
	rest  []byte // the unused end of the latest chunk
	frees []func() error
}

const (
	// arenaChunk is how much the arena maps at a time. Pages never
	// touched cost address space only, so the end of a chunk left over
	// costs nothing but the huge page it ends in.
	arenaChunk = 256 << 20
	// arenaAlone is the size from which a buffer gets an allocation of
	// its own rather than a place in a chunk.
	arenaAlone = 64 << 20
	// arenaAlign keeps each buffer on a page of its own start, as a
	// buffer from Alloc is (advice and locks are by page).
	arenaAlign = 4096
)

// chunked reports whether the arena packs buffers into chunks: only where
// Alloc asks for huge pages. Elsewhere a buffer is Alloc's, on the Go
// heap, and a chunk would only hold the collector back from freeing it.
const chunked = runtime.GOOS == "linux"

// Alloc returns size zeroed bytes that stay valid until Free, and
// whether they are mapped memory that Free unmaps (false: the Go heap,
// where Alloc fell back to it).
func (a *Arena) Alloc(size int) (buf []byte, mapped bool) {
	if size <= 0 {
		return nil, false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	n := (size + arenaAlign - 1) &^ (arenaAlign - 1)
	if !chunked || n >= arenaAlone {
		buf, free := Alloc(size)
		return buf, a.keep(free)
	}
	if n > len(a.rest) {
		chunk, free := Alloc(arenaChunk)
		if !a.keep(free) {
			return make([]byte, size), false // no mapping to be had: not a chunk's worth on the heap
		}
		a.rest = chunk
	}
	buf = a.rest[:size:size]
	a.rest = a.rest[n:]
	return buf, true
}

// keep holds on to a mapping's free and reports whether there was one.
func (a *Arena) keep(free func() error) bool {
	if free == nil {
		return false
	}
	a.frees = append(a.frees, free)
	return true
}

// Free releases every buffer the arena gave out; none may be used after.
// The arena is empty and can be used again.
func (a *Arena) Free() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	var err error
	for _, free := range a.frees {
		if e := free(); e != nil && err == nil {
			err = e
		}
	}
	a.frees, a.rest = nil, nil
	return err
}
