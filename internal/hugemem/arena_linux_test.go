package hugemem

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/churon/churon/internal/hugemem/hugememtest"
)

func addr(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }

// TestAllocAligned: a buffer of a huge page or more starts on a 2 MiB
// boundary; a smaller one on a page. Both are zeroed, writable, and gone
// after their free.
func TestAllocAligned(t *testing.T) {
	page := uintptr(os.Getpagesize())
	for _, size := range []int{100, HugePage - 1, HugePage, HugePage + 12345, 5*HugePage + 3} {
		buf, free := Alloc(size)
		if free == nil {
			t.Skip("no anonymous mapping on this system")
		}
		if len(buf) != size || cap(buf) != size {
			t.Errorf("Alloc(%d): len %d cap %d", size, len(buf), cap(buf))
		}
		align := page
		if size >= HugePage {
			align = HugePage
		}
		if a := addr(buf); a%align != 0 {
			t.Errorf("Alloc(%d) at %#x, not a multiple of %#x", size, a, align)
		}
		for i := 0; i < size; i += 4093 {
			if buf[i] != 0 {
				t.Fatalf("Alloc(%d): byte %d is %d, not zero", size, i, buf[i])
			}
			buf[i] = 1
		}
		buf[size-1] = 1
		if err := free(); err != nil {
			t.Errorf("free of Alloc(%d): %v", size, err)
		}
		if mapped(addr(buf)) {
			t.Errorf("Alloc(%d): still mapped after its free", size)
		}
	}
}

// TestArena: buffers are page-aligned, zeroed and disjoint, packed into
// chunks that lie in huge pages where the system gives them, and Free
// unmaps them all.
func TestArena(t *testing.T) {
	var a Arena
	sizes := []int{2359296, 294912, 294912, 6488064, 2359296, 1, 4096, 6488064, 70 << 20}
	var bufs [][]byte
	for _, n := range sizes {
		b, ok := a.Alloc(n)
		if !ok {
			t.Skip("no anonymous mapping on this system")
		}
		if len(b) != n || cap(b) != n || addr(b)%arenaAlign != 0 {
			t.Fatalf("Alloc(%d): len %d cap %d at %#x", n, len(b), cap(b), addr(b))
		}
		for i := range b {
			if b[i] != 0 {
				t.Fatalf("Alloc(%d): byte %d is %d, not zero", n, i, b[i])
			}
			b[i] = byte(len(bufs) + 1)
		}
		bufs = append(bufs, b)
	}
	for i, b := range bufs { // no buffer wrote over another
		for j := range b {
			if b[j] != byte(i+1) {
				t.Fatalf("buffer %d byte %d is %d, want %d", i, j, b[j], i+1)
			}
		}
	}
	if len(a.frees) != 2 {
		t.Errorf("%d mappings for %d buffers, want 2 (one chunk, and one for the buffer of 70 MiB)", len(a.frees), len(bufs))
	}
	// Every buffer but the last lies in the one chunk; where the kernel
	// gives huge pages on request, nearly all of it is in them.
	if thp, _ := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled"); !strings.Contains(string(thp), "[never]") && len(thp) > 0 {
		huge := hugememtest.SmapsKiB(t, addr(bufs[0]), "AnonHugePages:")
		used := int64(0)
		for _, b := range bufs[:len(bufs)-1] {
			used += int64(len(b)) >> 10
		}
		if huge < used*3/4 {
			t.Errorf("the chunk holds %d KiB of buffers, %d KiB of it in huge pages (want most)", used, huge)
		}
	}
	if err := a.Free(); err != nil {
		t.Fatal(err)
	}
	for i, b := range bufs {
		if mapped(addr(b)) {
			t.Errorf("buffer %d still mapped after Free", i)
		}
	}
	if b, _ := a.Alloc(10); len(b) != 10 {
		t.Error("a freed arena does not allocate again")
	}
	a.Free()
}

// mapped reports whether addr lies in a mapping of this process.
func mapped(addr uintptr) bool {
	b, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return false
	}
	for _, l := range strings.Split(string(b), "\n") {
		r, _, _ := strings.Cut(l, " ")
		from, to, _ := strings.Cut(r, "-")
		lo, err1 := strconv.ParseUint(from, 16, 64)
		hi, err2 := strconv.ParseUint(to, 16, 64)
		if err1 == nil && err2 == nil && uint64(addr) >= lo && uint64(addr) < hi {
			return true
		}
	}
	return false
}
