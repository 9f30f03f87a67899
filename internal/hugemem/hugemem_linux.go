package hugemem

import "syscall"

// Alloc returns size bytes of zeroed memory and the function that frees
// them (nil when the garbage collector does). On Linux they are an
// anonymous mapping the kernel is asked to back with 2 MiB pages
// (MADV_HUGEPAGE; transparent huge pages are often enabled only on
// request). Where the mapping fails it falls back to the Go heap.
func Alloc(size int) ([]byte, func() error) {
	if size <= 0 {
		return nil, nil
	}
	buf, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return make([]byte, size), nil
	}
	const madvHugepage = 14
	_ = syscall.Madvise(buf, madvHugepage) // advice: refused on kernels without THP
	return buf, func() error { return syscall.Munmap(buf) }
}
