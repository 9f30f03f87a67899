//go:build darwin

package metal

import "github.com/churon/churon/engine/backend"

// On macOS the backend registers as "metal" when the package is imported
// (the app imports it, the engine never does). Probing opens the default
// Metal device and compiles the kernels; anything in the way is the
// probe's one-line reason. Elsewhere it does not register — a Linux or
// Windows model's notes then hold CUDA's reason alone — and New says
// Metal is not available (churon devices says so too).
func init() {
	backend.Register("metal", backend.ProbeOf(New))
}
