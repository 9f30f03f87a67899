//go:build darwin

package main

import (
	"fmt"

	"github.com/churon/churon/engine/backend/metal"
)

// backendName is the backend gpucheck checks here.
const backendName = "metal"

// gpu is what the checks need of the backend's device.
type gpu = *metal.Device

func openGPU() (gpu, error) { return metal.New() }

// describeGPU prints the GPU as Metal reports it.
func describeGPU(d gpu) {
	in := d.Info()
	fmt.Printf("GPU:          %s (family %s, unified memory %v), MSL %s\n", in.Name, in.Family, in.Unified, in.Language)
	fmt.Printf("memory:       %.1f GiB recommended working set, buffers up to %.1f GiB\n",
		float64(in.WorkingSet)/(1<<30), float64(in.MaxBuffer)/(1<<30))
}
