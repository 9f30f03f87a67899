package ui

import (
	"testing"

	"github.com/churon/churon/ui/core"
)

// TestDeviceSummary: the status line says which GPU runs how much of the
// model, or, on the CPU, the reason a GPU is not used: its first clause,
// the chain behind it being Settings' and `churon devices`'.
func TestDeviceSummary(t *testing.T) {
	for _, tc := range []struct {
		m    core.ModelInfo
		want string
	}{
		{core.ModelInfo{Backend: "CPU avx2 (8 threads)", Threads: 8}, "CPU avx2 (8 threads)"},
		{core.ModelInfo{Backend: "CPU avx2", Threads: 8}, "CPU avx2 · 8 threads"},
		{core.ModelInfo{Backend: "CPU avx2 (8 threads)", Threads: 8,
			DeviceNotes: []string{"cuda: no NVIDIA driver found: libcuda.so.1: cannot open shared object file"}},
			"CPU avx2 (8 threads) — no NVIDIA driver found"},
		{core.ModelInfo{Backend: "CPU avx512 (2 threads)", Threads: 2,
			DeviceNotes: []string{"cuda: no NVIDIA GPU found (cuInit: CUDA_ERROR_NO_DEVICE (no CUDA-capable device is detected))"}},
			"CPU avx512 (2 threads) — no NVIDIA GPU found"},
		{core.ModelInfo{Backend: "CPU avx2 (8 threads)", Threads: 8,
			DeviceNotes: []string{"cuda: the NVIDIA GeForce GTX 970 (sm_52) is older than Churon's kernels support"}},
			"CPU avx2 (8 threads) — the NVIDIA GeForce GTX 970 (sm_52) is older than Churon's kernels support"},
		{core.ModelInfo{Backend: "CPU avx2 (8 threads)", Threads: 8,
			DeviceNotes: []string{"CUDA · NVIDIA RTX 4070 (sm_89, driver 550.54) failed: launching rope: CUDA_ERROR_ILLEGAL_ADDRESS; the model runs on the CPU now"}},
			"CPU avx2 (8 threads) — CUDA · NVIDIA RTX 4070 (sm_89, driver 550.54) failed"},
		{core.ModelInfo{Backend: "…", Accelerator: "CUDA · NVIDIA RTX 4070 (sm_89, driver 550.54)", Layers: 28, OffloadedLayers: 28, OffloadedOutput: true},
			"CUDA · NVIDIA RTX 4070 (sm_89, driver 550.54) · 28/28 layers"},
		{core.ModelInfo{Backend: "…", Accelerator: "CUDA · NVIDIA RTX 4070 (sm_89, driver 550.54)", Layers: 28, OffloadedLayers: 12},
			"CUDA · NVIDIA RTX 4070 (sm_89, driver 550.54) · 12/28 layers (the rest on the CPU)"},
	} {
		if got := deviceSummary(&tc.m); got != tc.want {
			t.Errorf("%+v:\n got %q\nwant %q", tc.m, got, tc.want)
		}
	}
}
