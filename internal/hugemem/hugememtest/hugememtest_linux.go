package hugememtest

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// Pattern is n bytes that tell pages apart: byte i is i*k + i/page
// (mod 256), page being the system's page size.
func Pattern(n, k int) []byte {
	page := os.Getpagesize()
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*k + i/page)
	}
	return b
}

// OpenFile writes data to a file in t's temporary directory and opens it
// for reading. The file is closed when the test ends (closing it before
// is fine); its Name is the path, to open it again.
func OpenFile(t testing.TB, data []byte) *os.File {
	t.Helper()
	path := filepath.Join(t.TempDir(), "weights")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// Map maps n bytes of the file fd (-1 for anonymous memory) with the
// protection and flags of syscall.Mmap; the mapping goes when the test
// ends.
func Map(t testing.TB, fd, n, prot, flags int) []byte {
	t.Helper()
	b, err := syscall.Mmap(fd, 0, n, prot, flags)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Munmap(b) })
	return b
}

// MapFile is a shared read-only mapping of a file that holds data
// (OpenFile, then Map): its pages are the file's, in the page cache.
func MapFile(t testing.TB, data []byte) []byte {
	t.Helper()
	f := OpenFile(t, data)
	return Map(t, int(f.Fd()), len(data), syscall.PROT_READ, syscall.MAP_SHARED)
}

// Mapping is what /proc/self/smaps says of one mapping: its inode ("0"
// for anonymous memory) and its fields in KiB, by name with the colon
// ("Rss:", "Locked:").
type Mapping struct {
	Inode string
	kib   map[string]int64
}

// KiB is the field (such as "Rss:") of m; it fails t when smaps has none.
func (m Mapping) KiB(t testing.TB, field string) int64 {
	t.Helper()
	kib, ok := m.kib[field]
	if !ok {
		t.Fatalf("no %s for the mapping in smaps", field)
	}
	return kib
}

// Smaps is the mapping that holds addr, from /proc/self/smaps. It skips
// t where there is no smaps, and fails it when no mapping holds addr.
func Smaps(t testing.TB, addr uintptr) Mapping {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skipf("no smaps: %v", err)
	}
	defer f.Close()
	var m *Mapping
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		if lo, hi, ok := strings.Cut(fields[0], "-"); ok && !strings.HasSuffix(fields[0], ":") {
			// A mapping's first line: its range, permissions, offset,
			// device, inode and path; the next mapping ends this one.
			if m != nil {
				break
			}
			s, err1 := strconv.ParseUint(lo, 16, 64)
			e, err2 := strconv.ParseUint(hi, 16, 64)
			if err1 == nil && err2 == nil && uint64(addr) >= s && uint64(addr) < e && len(fields) >= 5 {
				m = &Mapping{Inode: fields[4], kib: map[string]int64{}}
			}
			continue
		}
		if m != nil && len(fields) >= 2 && strings.HasSuffix(fields[0], ":") {
			if kib, err := strconv.ParseInt(fields[1], 10, 64); err == nil {
				m.kib[fields[0]] = kib
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("reading smaps: %v", err)
	}
	if m == nil {
		t.Fatalf("no mapping holds %x in smaps", addr)
	}
	return *m
}

// SmapsKiB is the field (such as "Rss:" or "Locked:") of the mapping that
// holds addr, from /proc/self/smaps.
func SmapsKiB(t testing.TB, addr uintptr, field string) int64 {
	t.Helper()
	return Smaps(t, addr).KiB(t, field)
}
