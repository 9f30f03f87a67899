//go:build linux

// Command ptxgen compiles Churon's CUDA kernels (engine/backend/cuda/kernels)
// to the PTX the backend embeds, with NVRTC loaded at run time (Debian
// non-free's libnvrtc11.2 is enough: no nvcc, no host compiler). Run it
// through go generate in engine/backend/cuda.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/churon/churon/engine/backend/cuda/internal/nvrtc"
)

func main() {
	dir := flag.String("src", "kernels", "folder of the kernel sources")
	out := flag.String("o", "kernels.ptx", "PTX file to write")
	flag.Parse()
	l, err := nvrtc.Load()
	if err != nil {
		fmt.Fprintln(os.Stderr, "ptxgen:", err)
		os.Exit(1)
	}
	ptx, err := nvrtc.Generate(l, *dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "ptxgen:", err)
		os.Exit(1)
	}
	if err := os.WriteFile(*out, ptx, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "ptxgen:", err)
		os.Exit(1)
	}
}
