//go:build linux || windows

package main

import (
	"fmt"

	"github.com/churon/churon/engine/backend/cuda"
)

// backendName is the backend gpucheck checks here.
const backendName = "cuda"

// gpu is what the checks need of the backend's device.
type gpu = *cuda.Device

func openGPU() (gpu, error) { return cuda.New() }

// describeGPU prints the library and the GPU.
func describeGPU(d gpu) {
	in := d.Info()
	fmt.Printf("library:      %s (CUDA %s, NVIDIA driver %q)\n", in.Library, in.CUDA, in.Driver)
	fmt.Printf("GPU:          sm_%d%d, %d multiprocessors, %.1f GiB, memory %.0f GB/s by its clock and bus\n",
		in.Major, in.Minor, in.Multiprocessor, float64(in.TotalBytes)/(1<<30), in.BandwidthGBs)
}
