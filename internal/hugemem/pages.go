package hugemem

import (
	"os"
	"unsafe"
)

// WholePages is the part of b made of whole pages of memory — what
// advice or a new mapping can take without touching the bytes beside b —
// and nil when b holds no whole page.
func WholePages(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	start := uintptr(unsafe.Pointer(&b[0]))
	page := uintptr(os.Getpagesize())
	lo := (start + page - 1) &^ (page - 1)
	hi := (start + uintptr(len(b))) &^ (page - 1)
	if hi <= lo {
		return nil
	}
	return b[lo-start : hi-start]
}
