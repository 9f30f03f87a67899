package hugemem

import (
	"bytes"
	"io"
	"os"
	"testing"
	"unsafe"

	"github.com/churon/churon/internal/hugemem/hugememtest"
)

func TestRefile(t *testing.T) {
	page := os.Getpagesize()
	want := hugememtest.Pattern(64*page+123, 7)
	f := hugememtest.OpenFile(t, want)
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
	f2, _ := os.Open(f.Name())
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

// vma is the inode and resident KiB of the mapping that holds addr.
func vma(t *testing.T, addr uintptr) (inode string, rssKiB int64) {
	t.Helper()
	m := hugememtest.Smaps(t, addr)
	return m.Inode, m.KiB(t, "Rss:")
}
