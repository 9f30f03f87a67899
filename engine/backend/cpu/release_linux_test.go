package cpu

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"unsafe"
)

// TestReleasePages: pages of a mapped file leave the resident set and
// read back the file's bytes; heap memory is told apart and keeps its
// bytes (the advice would have zeroed them).
func TestReleasePages(t *testing.T) {
	page := os.Getpagesize()
	want := make([]byte, 64*page)
	for i := range want {
		want[i] = byte(i*7 + i/page)
	}
	path := filepath.Join(t.TempDir(), "weights")
	if err := os.WriteFile(path, want, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	mapped, err := syscall.Mmap(int(f.Fd()), 0, len(want), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(mapped)
	if !bytes.Equal(mapped, want) { // and resident now
		t.Fatal("the mapping does not read the file")
	}
	start := uintptr(unsafe.Pointer(&mapped[0]))
	if !fileMapped(start, start+uintptr(len(mapped))) {
		t.Fatal("a file's mapping not seen as one")
	}
	before := residentKiB(t, start)
	// A tensor's bytes, not page-aligned: the pages wholly inside go.
	releasePages(mapped[100 : len(mapped)-100])
	after := residentKiB(t, start)
	if kept := int64(3 * page / 1024); after > kept || before < int64(len(want)/1024) {
		t.Errorf("mapping resident %d KiB before, %d KiB after (want at most the %d KiB of the edge pages)", before, after, kept)
	}
	if !bytes.Equal(mapped, want) {
		t.Error("released pages read back other bytes")
	}

	heap := bytes.Clone(want)
	hs := uintptr(unsafe.Pointer(&heap[0]))
	if fileMapped(hs, hs+uintptr(len(heap))) {
		t.Error("heap memory seen as a file's mapping")
	}
	releasePages(heap)
	if !bytes.Equal(heap, want) {
		t.Error("heap bytes lost")
	}
}

// residentKiB is the Rss of the mapping that starts at addr, from
// /proc/self/smaps.
func residentKiB(t *testing.T, addr uintptr) int64 {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skipf("no smaps: %v", err)
	}
	defer f.Close()
	head := strconv.FormatUint(uint64(addr), 16) + "-"
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := sc.Text()
		if fields := strings.Fields(l); len(fields) > 0 && strings.Contains(fields[0], "-") && !strings.HasSuffix(fields[0], ":") {
			in = strings.HasPrefix(l, head)
			continue
		}
		if in && strings.HasPrefix(l, "Rss:") {
			kib, err := strconv.ParseInt(strings.Fields(l)[1], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kib
		}
	}
	t.Fatalf("mapping at %x not in smaps", addr)
	return 0
}

// TestReleasePagesPrivateWritable: a private writable mapping of a file
// is left alone, since a page written to it is the process's own copy
// and the advice would bring back the file's bytes in its place.
func TestReleasePagesPrivateWritable(t *testing.T) {
	page := os.Getpagesize()
	path := filepath.Join(t.TempDir(), "weights")
	if err := os.WriteFile(path, make([]byte, 8*page), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	mapped, err := syscall.Mmap(int(f.Fd()), 0, 8*page, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(mapped)
	for i := range mapped {
		mapped[i] = byte(i*13 + 1)
	}
	want := bytes.Clone(mapped)
	start := uintptr(unsafe.Pointer(&mapped[0]))
	if fileMapped(start, start+uintptr(len(mapped))) {
		t.Error("a private writable mapping seen as the file's bytes")
	}
	releasePages(mapped)
	if !bytes.Equal(mapped, want) {
		t.Error("written pages of a private mapping lost")
	}
}
