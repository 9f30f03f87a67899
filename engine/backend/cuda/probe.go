//go:build linux || windows

package cuda

import "github.com/churon/churon/engine/backend"

// The backend registers as "cuda" when the package is imported (the app
// imports it, the engine never does). Probing loads the driver, finds
// the GPU and JIT-compiles the kernels; anything in the way is the
// probe's one-line reason.
func init() {
	backend.Register("cuda", backend.ProbeOf(New))
}
