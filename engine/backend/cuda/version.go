//go:build linux || windows

package cuda

import (
	"os"
	"regexp"
	"runtime"
	"strings"
	"unsafe"

	"github.com/ebitengine/purego"
)

// nvidiaDriverVersion is the NVIDIA driver's version ("550.54.14"), which
// the CUDA driver API does not report: from the kernel module on Linux,
// else from NVML (the management library the driver ships), else "".
func nvidiaDriverVersion() string {
	if runtime.GOOS == "linux" {
		if b, err := os.ReadFile("/proc/driver/nvidia/version"); err == nil {
			if m := regexp.MustCompile(`Kernel Module\s+(?:for \S+\s+)?(\d+\.\d+(?:\.\d+)?)`).FindSubmatch(b); m != nil {
				return string(m[1])
			}
		}
	}
	return nvmlDriverVersion()
}

// nvmlDriverVersion asks NVML, best effort: any failure gives "".
func nvmlDriverVersion() string {
	name := "libnvidia-ml.so.1"
	if runtime.GOOS == "windows" {
		name = "nvml.dll"
	}
	h, err := openLibrary(name)
	if err != nil {
		return ""
	}
	var fn [3]uintptr
	// nvmlReturn_t nvmlInit_v2(void)
	// nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length)
	// nvmlReturn_t nvmlShutdown(void)
	for i, s := range []string{"nvmlInit_v2", "nvmlSystemGetDriverVersion", "nvmlShutdown"} {
		if fn[i], err = lookup(h, s); err != nil || fn[i] == 0 {
			return ""
		}
	}
	if r, _, _ := purego.SyscallN(fn[0]); int32(r) != 0 {
		return ""
	}
	defer purego.SyscallN(fn[2])
	buf := make([]byte, 96)
	if r, _, _ := purego.SyscallN(fn[1], uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf))); int32(r) != 0 {
		return ""
	}
	v, _, _ := strings.Cut(string(buf), "\x00")
	return strings.TrimSpace(v)
}
