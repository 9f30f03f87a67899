//go:build linux

package cuda

import (
	"os"

	"github.com/ebitengine/purego"
)

// driverPaths are where the NVIDIA driver's library is looked for: the
// loader's search path (the driver installs libcuda.so.1 there), then
// WSL2's, where Windows' driver exposes it to Linux and which is not
// always on the search path. $CHURON_CUDA_LIBRARY, when set, is the only
// one.
func driverPaths() []string {
	if p := os.Getenv("CHURON_CUDA_LIBRARY"); p != "" {
		return []string{p}
	}
	paths := []string{"libcuda.so.1"}
	if _, err := os.Stat("/usr/lib/wsl/lib/libcuda.so.1"); err == nil {
		paths = append(paths, "/usr/lib/wsl/lib/libcuda.so.1")
	}
	return paths
}

// openLibrary loads a shared library. Its symbols stay local: the
// driver's are found through lookup only.
func openLibrary(path string) (uintptr, error) {
	return purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_LOCAL)
}

func lookup(h uintptr, name string) (uintptr, error) { return purego.Dlsym(h, name) }
