package cli

import (
	"runtime"
	"strings"
	"testing"
)

// TestDevices: with only the CPU registered, `churon devices` lists it,
// says why each planned accelerator backend is not there, and says that
// models run on the CPU; --json carries the same.
func TestDevices(t *testing.T) {
	out, _ := runOK(t, "devices")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) < 4 || !strings.HasPrefix(lines[0], "cpu    CPU ") {
		t.Fatalf("output:\n%s", out)
	}
	for _, b := range []struct{ name, goos string }{{"cuda", "linux windows"}, {"metal", "darwin"}} {
		want := b.name + "  unavailable: not built into this program"
		if !strings.Contains(b.goos, runtime.GOOS) {
			want = b.name + "  unavailable: not available on this system"
		}
		if !strings.Contains(out, want) && !strings.Contains(out, strings.Replace(want, "  ", "   ", 1)) {
			t.Errorf("no reason for %s (want %q):\n%s", b.name, want, out)
		}
	}
	if !strings.Contains(out, "Only the CPU is registered") {
		t.Errorf("does not say only the CPU is registered:\n%s", out)
	}
	var devs []deviceJSON
	runJSON(t, &devs, "devices", "--json")
	if len(devs) != 3 || !devs[0].Available || devs[0].Backend != "cpu" || devs[1].Available || devs[1].Reason == "" {
		t.Fatalf("--json: %+v", devs)
	}
}

// TestDeviceFlags: --device cpu runs; an unknown device or a bad -ngl is
// refused with the reason.
func TestDeviceFlags(t *testing.T) {
	model := synthFile(t, "llama")
	if _, stderr, code := run(t, "generate", "-m", model, "-p", "hi", "-n", "2", "--raw", "--device", "cpu", "-ngl", "0"); code != 0 {
		t.Fatalf("--device cpu: exit %d: %s", code, stderr)
	}
	if _, stderr, code := run(t, "generate", "-m", model, "-p", "hi", "-n", "2", "--device", "cuda"); code != 1 || !strings.Contains(stderr, `"cuda" is not built into this program`) {
		t.Fatalf("--device cuda: exit %d: %s", code, stderr)
	}
	if _, stderr, code := run(t, "generate", "-m", model, "-p", "hi", "-ngl", "-3"); code != 2 || !strings.Contains(stderr, "-ngl") {
		t.Fatalf("-ngl -3: exit %d: %s", code, stderr)
	}
}
