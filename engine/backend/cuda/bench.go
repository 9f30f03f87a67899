//go:build linux || windows

package cuda

import (
	"fmt"
	"unsafe"
)

// Launches is the number of kernels the device has launched.
func (d *Device) Launches() int64 { return d.launches }

// CopyBandwidth measures the device's memory bandwidth as a
// device-to-device copy of n bytes does it (each byte read once and
// written once), in GB/s: the bar a memory-bound kernel is measured
// against.
func (d *Device) CopyBandwidth(n int64) (float64, error) {
	if err := d.Sync(); err != nil {
		return 0, err
	}
	src, err := d.alloc(n, "a bandwidth test")
	if err != nil {
		return 0, err
	}
	defer d.freeLater(src)
	dst, err := d.alloc(n, "a bandwidth test")
	if err != nil {
		return 0, err
	}
	defer d.freeLater(dst)
	var ms float32
	d.g.exec.do(func() {
		drv := d.g.drv
		var ev [2]uintptr
		for i := range ev {
			if err = drv.call(cuEventCreate, uintptr(unsafe.Pointer(&ev[i])), 0); err != nil {
				return
			}
			defer drv.call(cuEventDestroy, ev[i])
		}
		const reps = 5
		if err = drv.call(cuMemcpyDtoDAsync, uintptr(dst), uintptr(src), uintptr(n), d.stream); err != nil { // warm-up
			return
		}
		if err = drv.call(cuEventRecord, ev[0], d.stream); err != nil {
			return
		}
		for range reps {
			if err = drv.call(cuMemcpyDtoDAsync, uintptr(dst), uintptr(src), uintptr(n), d.stream); err != nil {
				return
			}
		}
		if err = drv.call(cuEventRecord, ev[1], d.stream); err != nil {
			return
		}
		if err = drv.call(cuEventSynchronize, ev[1]); err != nil {
			return
		}
		if err = drv.call(cuEventElapsedTime, uintptr(unsafe.Pointer(&ms)), ev[0], ev[1]); err != nil {
			return
		}
		ms /= reps
	})
	if err != nil {
		return 0, err
	}
	if ms <= 0 {
		return 0, fmt.Errorf("cuda: a copy of %d bytes took no time", n)
	}
	return 2 * float64(n) / (float64(ms) / 1e3) / 1e9, nil
}
