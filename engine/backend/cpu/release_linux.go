package cpu

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"syscall"
	"unsafe"

	"github.com/churon/churon/internal/hugemem"
)

// releasePages drops this process's mapping of the whole pages inside b
// (MADV_DONTNEED) where b lies in a file mapping, such as a mapped model
// file, now that dup holds a copy of b's bytes (in another layout) that
// is read instead: they leave the resident set, stay in the page cache,
// and a read of them later faults them back in from the file. A model
// read into memory gives its pages back to its file (hugemem.Refile) and
// reads the same. Other memory (the heap) is left alone: there the advice
// would discard the bytes; so is a private writable mapping of a file,
// where a page written to is the process's own copy, which the advice
// would replace with the file's bytes. Pages locked in memory (mlock:
// LoadOptions.Lock), which the advice refuses, hand their lock to dup,
// the bytes now read, which the lock is for. Best effort: a failure
// keeps the pages (and their lock).
func releasePages(b, dup []byte) {
	pages := hugemem.WholePages(b)
	if pages == nil {
		return
	}
	lo := uintptr(unsafe.Pointer(&pages[0]))
	hi := lo + uintptr(len(pages))
	if !fileMapped(lo, hi) {
		// A model read into memory: its pages go back to its file
		// (where it was read by hugemem.AllocFile), not to nothing. The
		// new mapping is not locked: where the process locks memory
		// (LoadOptions.Lock), lock the copy first, or keep the pages.
		if lockedAny() && (len(dup) == 0 || syscall.Mlock(dup) != nil) {
			return
		}
		hugemem.Refile(b)
		return
	}
	if err := syscall.Madvise(pages, syscall.MADV_DONTNEED); err != syscall.EINVAL {
		return // released, or refused for a reason a lock does not explain
	}
	// A file's pages refuse the advice where they are locked. Lock the
	// copy first: where the limit (ulimit -l) has no room for it, the
	// file's pages keep the lock and stay.
	if len(dup) == 0 || syscall.Mlock(dup) != nil {
		return
	}
	if syscall.Munlock(pages) == nil {
		_ = syscall.Madvise(pages, syscall.MADV_DONTNEED)
	}
}

// fileMapped reports whether the addresses [lo, hi) are mapped from a
// file, according to /proc/self/maps: covered by mappings, each with an
// inode and either shared or read-only (a private writable one may hold
// pages written since, which are no longer the file's).
func fileMapped(lo, hi uintptr) bool {
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		return false
	}
	defer f.Close()
	at := lo // the first address not yet seen covered
	sc := bufio.NewScanner(f)
	for sc.Scan() && at < hi {
		// start-end perms offset dev inode [path]
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 {
			continue
		}
		from, to, ok := strings.Cut(fields[0], "-")
		if !ok {
			continue
		}
		s, err1 := strconv.ParseUint(from, 16, 64)
		e, err2 := strconv.ParseUint(to, 16, 64)
		if err1 != nil || err2 != nil || uintptr(e) <= at || uintptr(s) >= hi {
			continue
		}
		if uintptr(s) > at || fields[4] == "0" {
			return false // a hole, or memory that is no file's
		}
		if perms := fields[1]; len(perms) < 4 || (perms[1] == 'w' && perms[3] == 'p') {
			return false // copy on write: written pages are not the file's
		}
		at = uintptr(e)
	}
	return at >= hi
}

// lockedAny reports whether this process holds memory locked (VmLck in
// /proc/self/status), as a model loaded with LoadOptions.Lock does.
func lockedAny() bool {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return false
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmLck:"); ok {
			f := strings.Fields(v)
			return len(f) > 0 && f[0] != "0"
		}
	}
	return false
}
