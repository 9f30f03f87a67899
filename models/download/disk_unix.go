//go:build linux || darwin || freebsd || netbsd || openbsd

package download

import (
	"fmt"
	"syscall"
)

// freeSpace returns the bytes an unprivileged user may still write in dir.
func freeSpace(dir string) (int64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return -1, fmt.Errorf("download: statfs %s: %w", dir, err)
	}
	return int64(st.Bavail) * int64(st.Bsize), nil
}
