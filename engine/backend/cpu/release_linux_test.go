package cpu

import (
	"bytes"
	"os"
	"syscall"
	"testing"
	"unsafe"

	"github.com/churon/churon/internal/hugemem"
	"github.com/churon/churon/internal/hugemem/hugememtest"
)

// TestReleasePages: pages of a mapped file leave the resident set and
// read back the file's bytes; heap memory is told apart and keeps its
// bytes (the advice would have zeroed them).
func TestReleasePages(t *testing.T) {
	page := os.Getpagesize()
	want := hugememtest.Pattern(64*page, 7)
	mapped := hugememtest.MapFile(t, want)
	if !bytes.Equal(mapped, want) { // and resident now
		t.Fatal("the mapping does not read the file")
	}
	start := uintptr(unsafe.Pointer(&mapped[0]))
	if !fileMapped(start, start+uintptr(len(mapped))) {
		t.Fatal("a file's mapping not seen as one")
	}
	before := residentKiB(t, start)
	// A tensor's bytes, not page-aligned: the pages wholly inside go.
	releasePages(mapped[100:len(mapped)-100], nil)
	after := residentKiB(t, start)
	if kept := int64(3 * page / 1024); after > kept || before < int64(len(want)/1024) {
		t.Errorf("mapping resident %d KiB before, %d KiB after (want at most the %d KiB of the edge pages)", before, after, kept)
	}
	if !bytes.Equal(mapped, want) {
		t.Error("released pages read back other bytes")
	}

	checkLeftAlone(t, bytes.Clone(want), "heap memory seen as a file's mapping", "heap bytes lost")
}

// checkLeftAlone holds releasePages to memory whose bytes are not a
// file's (b): it is not seen as a file's mapping, and its bytes stay;
// seen and lost are the failures' messages.
func checkLeftAlone(t *testing.T, b []byte, seen, lost string) {
	t.Helper()
	want := bytes.Clone(b)
	start := uintptr(unsafe.Pointer(&b[0]))
	if fileMapped(start, start+uintptr(len(b))) {
		t.Error(seen)
	}
	releasePages(b, nil)
	if !bytes.Equal(b, want) {
		t.Error(lost)
	}
}

// residentKiB is the Rss of the mapping that holds addr.
func residentKiB(t *testing.T, addr uintptr) int64 { return hugememtest.SmapsKiB(t, addr, "Rss:") }

// TestReleasePagesPrivateWritable: a private writable mapping of a file
// is left alone, since a page written to it is the process's own copy
// and the advice would bring back the file's bytes in its place.
func TestReleasePagesPrivateWritable(t *testing.T) {
	page := os.Getpagesize()
	f := hugememtest.OpenFile(t, make([]byte, 8*page))
	mapped := hugememtest.Map(t, int(f.Fd()), 8*page, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE)
	for i := range mapped {
		mapped[i] = byte(i*13 + 1)
	}
	checkLeftAlone(t, mapped, "a private writable mapping seen as the file's bytes", "written pages of a private mapping lost")
}

// TestReleasePagesLocked: locked pages of a file's mapping (LoadOptions.
// Lock) refuse the advice; they hand their lock to the copy that is read
// instead and are released, so that the weights in use stay locked and
// are not held twice.
func TestReleasePagesLocked(t *testing.T) {
	page := os.Getpagesize()
	want := hugememtest.Pattern(16*page, 5)
	mapped := hugememtest.MapFile(t, want)
	if err := syscall.Mlock(mapped); err != nil {
		t.Skipf("mlock refused here: %v", err)
	}
	defer syscall.Munlock(mapped)
	dup := hugememtest.Map(t, -1, len(want), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	copy(dup, mapped)
	start, dupStart := uintptr(unsafe.Pointer(&mapped[0])), uintptr(unsafe.Pointer(&dup[0]))
	if locked := hugememtest.SmapsKiB(t, start, "Locked:"); locked < int64(len(want)/1024) {
		t.Fatalf("the file's pages: %d KiB locked before", locked)
	}
	releasePages(mapped, dup)
	if locked, rss := hugememtest.SmapsKiB(t, start, "Locked:"), residentKiB(t, start); locked != 0 || rss != 0 {
		t.Errorf("the file's pages after: %d KiB locked, %d KiB resident (want none)", locked, rss)
	}
	if locked := hugememtest.SmapsKiB(t, dupStart, "Locked:"); locked < int64(len(want)/1024) {
		t.Errorf("the copy: %d KiB locked, want %d", locked, len(want)/1024)
	}
	if !bytes.Equal(mapped, want) || !bytes.Equal(dup, want) {
		t.Error("bytes lost")
	}
}

// TestReleasePagesLockedInMemory: a model read into memory and locked
// (--no-mmap with LoadOptions.Lock) hands its lock to the copy before its
// pages go back to the file, so the bytes read stay locked.
func TestReleasePagesLockedInMemory(t *testing.T) {
	page := os.Getpagesize()
	want := make([]byte, 16*page)
	for i := range want {
		want[i] = byte(i * 13)
	}
	f := hugememtest.OpenFile(t, want)
	buf, free := hugemem.AllocFile(f, len(want))
	f.Close()
	if free == nil {
		t.Skip("no anonymous mapping here")
	}
	defer free()
	copy(buf, want)
	if err := syscall.Mlock(buf); err != nil {
		t.Skipf("mlock refused (ulimit -l): %v", err)
	}
	defer syscall.Munlock(buf)
	dup, freeDup := hugemem.Alloc(8 * page)
	if freeDup != nil {
		defer freeDup()
	}
	releasePages(buf[2*page:10*page], dup)
	if !lockedAny() {
		t.Fatal("VmLck reads 0 with memory locked")
	}
	if kib := hugememtest.SmapsKiB(t, uintptr(unsafe.Pointer(&dup[0])), "Locked:"); kib < int64(8*page/1024) {
		t.Errorf("the copy has %d KiB locked, want all %d", kib, 8*page/1024)
	}
	if !bytes.Equal(buf, want) {
		t.Error("the buffer reads other bytes")
	}
}
