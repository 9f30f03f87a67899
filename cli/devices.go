package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/churon/churon/engine"
)

func init() {
	register("devices", "list the devices models can run on, and why others are not there", runDevices)
}

// plannedBackends are the accelerator backends Churon is to have; one
// this build does not register is listed as such, so a person sees why
// the GPU is not used.
var plannedBackends = []struct{ name, what, goos string }{
	{"cuda", "NVIDIA GPUs through the CUDA driver (Linux, Windows)", "linux windows"},
	{"metal", "Apple silicon GPUs through Metal (macOS)", "darwin"},
}

// deviceJSON is one line of `churon devices --json`.
type deviceJSON struct {
	Backend   string `json:"backend"`
	Device    string `json:"device,omitempty"`
	Available bool   `json:"available"`
	Reason    string `json:"reason,omitempty"`
}

// listDevices lists the CPU, every registered backend and the planned
// ones this build lacks; registered counts the backends besides the CPU
// this build has.
func listDevices(threads int) (out []deviceJSON, registered int) {
	seen := map[string]bool{}
	for _, r := range engine.Devices(threads) {
		d := deviceJSON{Backend: r.Backend, Device: r.Device, Available: r.Err == nil}
		if r.Err != nil {
			d.Reason = r.Err.Error()
		}
		seen[r.Backend] = true
		out = append(out, d)
	}
	registered = len(out) - 1
	for _, p := range plannedBackends {
		if seen[p.name] {
			continue
		}
		reason := "not built into this program yet (" + p.what + ")"
		if !slices.Contains(strings.Fields(p.goos), runtime.GOOS) {
			// The Metal backend registers on macOS only: elsewhere it
			// is built in but has nothing to find.
			reason = "not available on this system (" + p.what + ")"
		}
		out = append(out, deviceJSON{Backend: p.name, Reason: reason})
	}
	return out, registered
}

func runDevices(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("devices", stderr)
	threads := fs.Int("t", 0, "CPU threads to describe (0 = physical cores)")
	asJSON := fs.Bool("json", false, "print a JSON array, one object per backend")
	if _, err := parse(fs, args); err != nil {
		return err
	}
	devs, registered := listDevices(*threads)
	if *asJSON {
		return json.NewEncoder(stdout).Encode(devs)
	}
	for _, d := range devs {
		if d.Available {
			fmt.Fprintf(stdout, "%-6s %s\n", d.Backend, d.Device)
		} else {
			fmt.Fprintf(stdout, "%-6s unavailable: %s\n", d.Backend, d.Reason)
		}
	}
	if registered == 0 {
		fmt.Fprintln(stdout, "Only the CPU is registered in this build: models run on the CPU.")
	}
	return nil
}

// deviceFlags choose where a model's layers run.
type deviceFlags struct {
	device string
	ngl    string
}

func (f *deviceFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.device, "device", "auto", "where layers may run besides the CPU: auto (the first accelerator found), cpu, or a backend from 'churon devices'")
	fs.StringVar(&f.ngl, "ngl", "auto", "layers on the accelerator, as llama.cpp's -ngl (the last N; more than the layers adds the output head): auto (as many as fit), or a number (0 = none)")
}

// apply sets the load options the flags ask for.
func (f *deviceFlags) apply(opt *engine.LoadOptions) error {
	opt.Device = f.device
	switch v := strings.ToLower(f.ngl); v {
	case "", "auto":
		opt.GPULayers = engine.OffloadAuto
	default:
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return usagef("-ngl %q: want auto or a number of layers", f.ngl)
		}
		if n == 0 {
			n = engine.OffloadNone
		}
		opt.GPULayers = n
	}
	return nil
}
