package hugemem

import (
	"os"
	"sync"
	"syscall"
	"unsafe"
)

// A model read into memory (not mapped) is a copy of its file. Where
// part of it is needed no more in this form — the CPU device holds those
// weights repacked elsewhere — Refile hands those pages back to the file:
// the range is mapped again, privately, from the file at the same offset,
// so it reads the same bytes but its pages leave the resident set and
// come back from the page cache only if something reads them. Discarding
// them instead (MADV_DONTNEED on anonymous memory) would turn a later
// read of the tensor (the identity hash, a row of a tied embedding) into
// zeros.

// fileCopy is a buffer that holds a file's bytes from offset 0.
type fileCopy struct {
	buf []byte
	f   *os.File
}

var (
	copiesMu sync.Mutex
	copies   []*fileCopy
)

// AllocFile is Alloc for a buffer that will hold f's first size bytes
// (the caller reads them in): Refile can later give its pages back to
// the file. The returned function frees the buffer and closes its own
// handle of the file. Without an anonymous mapping (the Go heap) it is
// Alloc.
func AllocFile(f *os.File, size int) ([]byte, func() error) {
	buf, free := Alloc(size)
	if free == nil {
		return buf, nil
	}
	fd, err := syscall.Dup(int(f.Fd()))
	if err != nil {
		return buf, free
	}
	c := &fileCopy{buf: buf, f: os.NewFile(uintptr(fd), f.Name())}
	copiesMu.Lock()
	copies = append(copies, c)
	copiesMu.Unlock()
	return buf, func() error {
		copiesMu.Lock()
		for i, x := range copies {
			if x == c {
				copies = append(copies[:i], copies[i+1:]...)
				break
			}
		}
		copiesMu.Unlock()
		c.f.Close()
		return free()
	}
}

// Refile maps the whole pages inside b — which must lie in a buffer from
// AllocFile whose bytes are the file's — from the file again, and
// reports whether it did. Best effort: false leaves the memory as it was.
func Refile(b []byte) bool {
	pages := WholePages(b)
	if pages == nil {
		return false
	}
	lo := uintptr(unsafe.Pointer(&pages[0]))
	hi := lo + uintptr(len(pages))
	copiesMu.Lock()
	defer copiesMu.Unlock()
	for _, c := range copies {
		base := uintptr(unsafe.Pointer(&c.buf[0]))
		if lo < base || hi > base+uintptr(len(c.buf)) {
			continue
		}
		// MAP_FIXED replaces the anonymous pages in place; the buffer's
		// munmap later unmaps both kinds alike.
		_, _, errno := syscall.Syscall6(syscall.SYS_MMAP, lo, hi-lo,
			syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_FIXED,
			c.f.Fd(), lo-base)
		return errno == 0
	}
	return false
}
