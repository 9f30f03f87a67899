package metal

import "github.com/churon/churon/engine/backend"

// The backend registers as "metal" when the package is imported (the app
// imports it, the engine never does). Probing opens the default Metal
// device and compiles the kernels; anything in the way is the probe's
// one-line reason — off a Mac, "Metal: not available on this system".
func init() {
	backend.Register("metal", func() (backend.Device, error) {
		d, err := New()
		if err != nil {
			return nil, err
		}
		return d, nil
	})
}
