//go:build !(linux || darwin || freebsd || netbsd || openbsd)

package download

// freeSpace is unknown here: the write errors tell of a full disk instead.
func freeSpace(dir string) (int64, error) { return -1, nil }
