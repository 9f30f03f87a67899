package gpucommon

import (
	"fmt"
	"sync"

	"github.com/churon/churon/engine/backend"
)

// Mem is an allocation of N float32 values of the device Dev at At (a
// CUDA address, a Metal buffer): what its Bufs view.
type Mem[D comparable, H any] struct {
	Dev   D
	At    H
	N     int
	freed bool
}

// Len implements backend.Mem.
func (m *Mem[D, H]) Len() int { return m.N }

// MemOf is the allocation b views, of the device d called label; it
// panics, naming the backend (prefix), when b is another device's or was
// freed.
func MemOf[D comparable, H any](prefix, label string, d D, b backend.Buf) *Mem[D, H] {
	m, ok := b.Mem().(*Mem[D, H])
	if !ok || m.Dev != d {
		panic(fmt.Sprintf("%s: %s got a buffer of another device (%T)", prefix, label, b.Mem()))
	}
	if m.freed {
		panic(prefix + ": a buffer used after Free")
	}
	return m
}

// FreeMem marks b's allocation freed and returns it, false for the zero
// Buf; it panics as MemOf, or when b was freed before.
func FreeMem[D comparable, H any](prefix, label string, d D, b backend.Buf) (H, bool) {
	var zero H
	if b.Mem() == nil {
		return zero, false
	}
	m, ok := b.Mem().(*Mem[D, H])
	if !ok || m.Dev != d {
		panic(fmt.Sprintf("%s: %s asked to free a buffer of another device (%T)", prefix, label, b.Mem()))
	}
	if m.freed {
		panic(prefix + ": a buffer freed twice")
	}
	m.freed = true
	return m.At, true
}

// Allocs are a device's allocations by handle: their sizes and bytes, and
// those freed since the device last waited for its queue, which go back
// after it next does (work queued before may still use them). Caches are
// released from any goroutine: every method is safe from any.
type Allocs[H comparable] struct {
	mu     sync.Mutex
	live   map[H]int64
	frees  []H
	used   int64
	closed bool
}

// Add counts an allocation of n bytes.
func (a *Allocs[H]) Add(h H, n int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.live == nil {
		a.live = map[H]int64{}
	}
	a.live[h] = n
	a.used += n
}

// FreeLater queues h to go back after the next wait; the zero handle, and
// anything after Close, is ignored.
func (a *Allocs[H]) FreeLater(h H) {
	var zero H
	if h == zero {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return // freed with the device
	}
	a.frees = append(a.frees, h)
}

// Used is the bytes of the allocations not yet taken back.
func (a *Allocs[H]) Used() int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.used
}

// Freed is what was freed since the last call, for the device to give
// back now, no longer counted.
func (a *Allocs[H]) Freed() []H {
	a.mu.Lock()
	defer a.mu.Unlock()
	frees := a.frees
	a.frees = nil
	for _, h := range frees {
		a.used -= a.live[h]
		delete(a.live, h)
	}
	return frees
}

// Close is every allocation not yet given back, for the device to give
// back as it closes; later frees are ignored.
func (a *Allocs[H]) Close() []H {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.closed = true
	all := make([]H, 0, len(a.live))
	for h := range a.live {
		all = append(all, h)
	}
	a.frees, a.live, a.used = nil, nil, 0
	return all
}
