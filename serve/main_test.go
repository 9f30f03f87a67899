package serve

import (
	"os"
	"sync"
	"testing"
)

var (
	binDirOnce sync.Once
	binDir     string
	binDirErr  error
)

// dirForBinary is one temporary folder for the whole test binary, so that
// generated models are written once; TestMain removes it.
func dirForBinary() (string, error) {
	binDirOnce.Do(func() { binDir, binDirErr = os.MkdirTemp("", "churon-serve-test-") })
	return binDir, binDirErr
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}
