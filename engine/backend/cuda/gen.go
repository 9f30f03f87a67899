//go:build linux || windows

package cuda

// The kernels are CUDA C (kernels/kernels.cu, kernels/common.cuh),
// compiled to PTX at development time with NVRTC (no nvcc, no host
// compiler: Debian non-free's libnvrtc11.2 is enough) and embedded; the
// driver JIT-compiles the PTX for the GPU at load and caches the result.
// Regenerate after editing a kernel; TestPTXUpToDate fails until then.
//go:generate go run ./internal/ptxgen -src kernels -o kernels.ptx
