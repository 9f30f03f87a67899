package hugemem

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

func TestRefile(t *testing.T) {
	page := os.Getpagesize()
	want := make([]byte, 64*page+123)
	for i := range want {
		want[i] = byte(i*7 + i/page)
	}
	path := filepath.Join(t.TempDir(), "model")
	if err := os.WriteFile(path, want, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	buf, free := AllocFile(f, len(want))
	f.Close() // AllocFile keeps its own handle
	if free == nil {
		t.Skip("no anonymous mapping on this system: nothing to refile")
	}
	defer func() {
		if err := free(); err != nil {
			t.Error(err)
		}
		if Refile(buf[:page]) {
			t.Error("a freed buffer was refiled")
		}
	}()
	f2, _ := os.Open(path)
	if _, err := io.ReadFull(f2, buf); err != nil {
		t.Fatal(err)
	}
	f2.Close()

	// A tensor's bytes, not page-aligned: the pages wholly inside go back.
	tensor := buf[100 : 40*page+7]
	mid := uintptr(unsafe.Pointer(&buf[20*page]))
	if inode, rss := vma(t, mid); inode != "0" || rss == 0 {
		t.Fatalf("before: inode %s, %d KiB resident; want anonymous and resident", inode, rss)
	}
	if !Refile(tensor) {
		t.Fatal("Refile refused a buffer from AllocFile")
	}
	if inode, rss := vma(t, mid); inode == "0" || rss != 0 {
		t.Errorf("after: inode %s, %d KiB resident; want the file's, not resident", inode, rss)
	}
	if !bytes.Equal(buf, want) {
		t.Error("the refiled buffer reads other bytes than the file")
	}
	if Refile(make([]byte, 4*page)) {
		t.Error("heap memory refiled")
	}
}

// vma is the inode and resident KiB of the mapping that holds addr, from
// /proc/self/smaps.
func vma(t *testing.T, addr uintptr) (inode string, rssKiB int64) {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skipf("no smaps: %v", err)
	}
	defer f.Close()
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 5 && strings.Contains(fields[0], "-") && !strings.HasSuffix(fields[0], ":") {
			lo, hi, _ := strings.Cut(fields[0], "-")
			a, _ := strconv.ParseUint(lo, 16, 64)
			b, _ := strconv.ParseUint(hi, 16, 64)
			in = uint64(addr) >= a && uint64(addr) < b
			if in {
				inode = fields[4]
			}
			continue
		}
		if in && len(fields) >= 2 && fields[0] == "Rss:" {
			kib, err := strconv.ParseInt(fields[1], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return inode, kib
		}
	}
	t.Fatalf("no mapping holds %x", addr)
	return "", 0
}
