package session

import (
	"os"
	"sync"
)

var (
	binDirOnce sync.Once
	binDir     string
	binDirErr  error
)

// tempDirForBinary is one temporary folder for the whole test binary, so
// generated models are written once; TestMain removes it.
func tempDirForBinary() (string, error) {
	binDirOnce.Do(func() { binDir, binDirErr = os.MkdirTemp("", "churon-session-test-") })
	return binDir, binDirErr
}
