//go:build windows

package cuda

import (
	"os"

	"golang.org/x/sys/windows"
)

// driverPaths: the NVIDIA driver puts nvcuda.dll in System32; it is
// loaded from there only, never from the program's folder or the current
// directory. $CHURON_CUDA_LIBRARY, when set, is a full path to use
// instead.
func driverPaths() []string {
	if p := os.Getenv("CHURON_CUDA_LIBRARY"); p != "" {
		return []string{p}
	}
	return []string{"nvcuda.dll"}
}

func openLibrary(path string) (uintptr, error) {
	flags := uintptr(windows.LOAD_LIBRARY_SEARCH_SYSTEM32)
	if os.Getenv("CHURON_CUDA_LIBRARY") != "" {
		flags = windows.LOAD_WITH_ALTERED_SEARCH_PATH
	}
	h, err := windows.LoadLibraryEx(path, 0, flags)
	return uintptr(h), err
}

func lookup(h uintptr, name string) (uintptr, error) {
	return windows.GetProcAddress(windows.Handle(h), name)
}
