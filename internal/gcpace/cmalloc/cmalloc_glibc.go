//go:build linux && cgo

package cmalloc

/*
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

// mallinfo2 is glibc 2.33's; weak, so that the app still links (and
// reads no statistics) on an older glibc.
extern struct mallinfo2 mallinfo2(void) __attribute__((weak));

static int churon_mallinfo2(size_t *inuse, size_t *free_, size_t *mapped) {
	if (!mallinfo2) return 0;
	struct mallinfo2 m = mallinfo2();
	*inuse = m.uordblks;
	*free_ = m.fordblks;
	*mapped = m.hblkhd;
	return 1;
}

// churon_fill_heap mallocs n blocks of size bytes, writes them, and frees
// all but the last: free memory below a block in use, which glibc does
// not give back by itself (for the tests).
static void *churon_fill_heap(size_t n, size_t size) {
	void *last = NULL;
	void **blocks = malloc(n * sizeof(void *));
	if (!blocks) return NULL;
	for (size_t i = 0; i < n; i++) {
		blocks[i] = malloc(size);
		if (blocks[i]) memset(blocks[i], 1, size);
	}
	last = blocks[n-1];
	for (size_t i = 0; i + 1 < n; i++) free(blocks[i]);
	free(blocks);
	return last;
}
*/
import "C"

import "unsafe"

const supported = true

func read() (Stats, bool) {
	var inuse, free, mapped C.size_t
	if C.churon_mallinfo2(&inuse, &free, &mapped) == 0 {
		return Stats{}, false
	}
	return Stats{InUse: uint64(inuse) + uint64(mapped), Free: uint64(free)}, true
}

func trim() { C.malloc_trim(0) }

// fillHeap leaves n×size bytes of free, written memory in the C heap
// under a block still in use, and returns what frees that block.
func fillHeap(n, size int) (release func()) {
	last := C.churon_fill_heap(C.size_t(n), C.size_t(size))
	return func() { C.free(unsafe.Pointer(last)) }
}
