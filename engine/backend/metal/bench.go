package metal

import (
	"fmt"
	"time"
)

// Launches is the number of kernels the device has dispatched (the name
// the CUDA backend's benchmarks use).
func (d *Device) Launches() int64 { return d.dispatches }

// CopyBandwidth measures the GPU's memory bandwidth as a copy kernel of n
// bytes reaches it (each byte read once and written once), in GB/s,
// timed on the host around command buffers of five copies after a
// warm-up: the bar a memory-bound kernel is measured against.
func (d *Device) CopyBandwidth(n int64) (float64, error) {
	if err := d.Sync(); err != nil {
		return 0, err
	}
	words := int(n / 4)
	src, err := d.alloc(4*words, "a bandwidth test")
	if err != nil {
		return 0, err
	}
	defer d.freeLater(src)
	dst, err := d.alloc(4*words, "a bandwidth test")
	if err != nil {
		return 0, err
	}
	defer d.freeLater(dst)
	copyOnce := func() { d.launch1(kCopyWords, words, []uint32{i32(words)}, dst.at(0), src.at(0)) }
	copyOnce() // warm-up
	if err := d.Sync(); err != nil {
		return 0, err
	}
	const reps = 5
	t0 := time.Now()
	for range reps {
		copyOnce()
	}
	if err := d.Sync(); err != nil {
		return 0, err
	}
	s := time.Since(t0).Seconds() / reps
	if s <= 0 {
		return 0, fmt.Errorf("metal: a copy of %d bytes took no time", n)
	}
	return 2 * float64(4*words) / s / 1e9, nil
}
