package backend

import (
	"fmt"
	"sync"
)

// Probe looks for a backend's device: it loads the backend's libraries,
// finds a device and returns it ready for use, or says in one line why
// there is none ("libcuda.so.1: cannot open shared object file").
type Probe func() (Device, error)

var (
	regMu    sync.Mutex
	registry []registered
)

type registered struct {
	name  string
	probe Probe
}

// ProbeOf makes a Probe of a backend's constructor. A constructor returns
// its own device type, and a nil *Device in an interface is not a nil
// Device: the device is boxed only when there is one.
func ProbeOf[D Device](open func() (D, error)) Probe {
	return func() (Device, error) {
		d, err := open()
		if err != nil {
			return nil, err
		}
		return d, nil
	}
}

// Register makes a backend available under name. Accelerator packages
// call it from init and are imported by the app, never by the engine, so
// that what they load at run time stays out of the engine's own builds
// and tests. The engine probes backends in the order they registered.
// Register panics if the name is taken: that is a programming error.
func Register(name string, p Probe) {
	regMu.Lock()
	defer regMu.Unlock()
	for _, r := range registry {
		if r.name == name {
			panic("backend: Register called twice for " + name)
		}
	}
	registry = append(registry, registered{name, p})
}

// Registered lists the registered backends in probing order.
func Registered() []string {
	regMu.Lock()
	defer regMu.Unlock()
	out := make([]string, len(registry))
	for i, r := range registry {
		out[i] = r.name
	}
	return out
}

// ProbeResult is what one backend's probe found.
type ProbeResult struct {
	Backend string
	Device  Device // nil when Err is set
	Err     error  // one line: why the backend has no device here
}

// ProbeAll asks every registered backend for its device, in order. With
// first set it stops at the first that works; the results before it say
// why the others did not. The caller owns (and closes) the devices.
func ProbeAll(first bool) []ProbeResult {
	regMu.Lock()
	regs := append([]registered(nil), registry...)
	regMu.Unlock()
	var out []ProbeResult
	for _, r := range regs {
		d, err := safeProbe(r)
		out = append(out, ProbeResult{Backend: r.name, Device: d, Err: err})
		if first && err == nil {
			break
		}
	}
	return out
}

// ProbeNamed probes the backend registered as name.
func ProbeNamed(name string) (Device, error) {
	regMu.Lock()
	regs := append([]registered(nil), registry...)
	regMu.Unlock()
	for _, r := range regs {
		if r.name == name {
			return safeProbe(r)
		}
	}
	return nil, fmt.Errorf("%w: %q is not built into this program", ErrNoBackend, name)
}

// safeProbe turns a probe's panic (a broken driver library can make a
// binding panic) into its reason, so one bad backend never stops the
// program.
func safeProbe(r registered) (d Device, err error) {
	defer func() {
		if p := recover(); p != nil {
			d, err = nil, fmt.Errorf("probe panicked: %v", p)
		}
	}()
	d, err = r.probe()
	if err == nil && d == nil {
		err = fmt.Errorf("probe found no device")
	}
	return d, err
}
