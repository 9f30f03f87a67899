// Package cuda runs models on NVIDIA GPUs through the CUDA driver API,
// loaded at run time with purego: no cgo, no CUDA runtime, nothing to
// install beyond the NVIDIA driver (libcuda.so.1 on Linux and WSL2,
// nvcuda.dll on Windows). Importing it registers the "cuda" backend
// (engine/backend.Register); the app imports it, the engine never does.
//
// The kernels are Churon's own CUDA C (kernels/), compiled to PTX at
// development time (go generate; internal/ptxgen) and JIT-compiled by
// the driver when the backend starts. Each computes what the CPU
// backend computes — see kernels/kernels.cu for where the two are equal
// bit for bit and where only within rounding — and the tests pin them to
// it on a GPU and, without one, under an emulated driver (emu/) that
// runs the same CUDA C on the CPU.
//
// The package builds on Linux and Windows; elsewhere it is empty.
package cuda
