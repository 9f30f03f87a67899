package backend_test

import (
	"errors"
	"testing"

	"github.com/churon/churon/engine/backend"
	"github.com/churon/churon/engine/backend/fake"
)

// TestProbeOf: a constructor's failure reaches the probe as a nil Device
// (not a nil *Device in an interface, which the registry would take for a
// device), and its device as itself.
func TestProbeOf(t *testing.T) {
	why := errors.New("no GPU here")
	d, err := backend.ProbeOf(func() (*fake.Device, error) { return nil, why })()
	if d != nil || !errors.Is(err, why) {
		t.Errorf("failing constructor: got (%v, %v), want (nil, %v)", d, err, why)
	}
	want := fake.New(fake.Options{Name: "G"})
	defer want.Close()
	d, err = backend.ProbeOf(func() (*fake.Device, error) { return want, nil })()
	if err != nil || d != backend.Device(want) {
		t.Errorf("working constructor: got (%v, %v), want (%v, nil)", d, err, want)
	}
}
