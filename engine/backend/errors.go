package backend

import (
	"errors"
	"fmt"
)

var (
	// ErrOutOfMemory is wrapped when a device has no room for an
	// allocation, an upload or a cache.
	ErrOutOfMemory = errors.New("backend: out of device memory")
	// ErrNoBackend is wrapped when a named backend is not registered.
	ErrNoBackend = errors.New("backend: no such backend")
	// ErrUnsupported is wrapped when a device cannot run an operation or
	// a weight type.
	ErrUnsupported = errors.New("backend: not supported by this device")
)

// DeviceError is a failure of a device during a forward pass, reported
// by its Sync: the engine moves the model to the CPU when one that is not
// the CPU fails, and says why with this error.
type DeviceError struct {
	Device Device
	Err    error
}

func (e *DeviceError) Error() string { return fmt.Sprintf("%s failed: %v", e.Device.Name(), e.Err) }

func (e *DeviceError) Unwrap() error { return e.Err }
