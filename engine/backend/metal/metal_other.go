//go:build !darwin

package metal

// openSystem: Metal exists only on Apple's systems.
func openSystem() (runner, error) { return nil, errNotAvailable }
