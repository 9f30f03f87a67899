package hugemem

import (
	"os"
	"testing"
	"unsafe"
)

// TestWholePages: the whole pages inside a slice, none in one shorter
// than a page or empty.
func TestWholePages(t *testing.T) {
	page := os.Getpagesize()
	buf := make([]byte, 6*page)
	base := int(uintptr(unsafe.Pointer(&buf[0])) % uintptr(page))
	first := (page - base) % page // the index of buf's first page boundary
	b := buf[first+100 : first+4*page+7]
	got := WholePages(b)
	if len(got) != 3*page || uintptr(unsafe.Pointer(&got[0]))%uintptr(page) != 0 || &got[0] != &b[page-100] {
		t.Errorf("WholePages of 4 pages less 93 bytes from 100 bytes in: %d bytes, want the 3 pages inside", len(got))
	}
	if got := WholePages(buf[first : first+page]); len(got) != page {
		t.Errorf("one aligned page: %d bytes", len(got))
	}
	if got := WholePages(buf[first+1 : first+page+1]); got != nil {
		t.Errorf("a page's length across a boundary: %d bytes, want none", len(got))
	}
	if got := WholePages(nil); got != nil {
		t.Error("WholePages(nil) is not nil")
	}
}
