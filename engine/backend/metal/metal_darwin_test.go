package metal

import "testing"

// On a Mac the tests run on Metal itself: the default device, as the
// app opens it. Without one they skip, saying why.

// openTest opens the device the kernel tests run on (env is the
// emulator's configuration, which Metal ignores).
func openTest(t testing.TB, env ...string) *Device {
	t.Helper()
	d, err := New()
	if err != nil {
		t.Skipf("SKIP: no Metal device: %v", err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// useTestBackend makes the registered "metal" backend the device the
// engine tests load models on: Metal itself here.
func useTestBackend(t testing.TB) {
	t.Helper()
	d, err := New()
	if err != nil {
		t.Skipf("SKIP: no Metal device: %v", err)
	}
	d.Close()
}
