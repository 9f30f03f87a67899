package metal

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/churon/churon/engine"
	"github.com/churon/churon/engine/backend"
	"github.com/churon/churon/engine/backend/internal/gputwin"
	"github.com/churon/churon/engine/quant"
	"github.com/churon/churon/internal/gpucheck/e2etest"
)

// Tests of the device's host side that need the emulated runner: faults,
// missing kernels, wrapped weights, memory accounting. (Off a Mac the real
// runner does not exist: TestNoMetal.)

// TestNoMetal: off a Mac the backend says in one line that Metal is not
// there, and the engine runs on the CPU without a note from it.
func TestNoMetal(t *testing.T) {
	_, err := New()
	if !errors.Is(err, errNotAvailable) || err.Error() != "not available on this system (Metal runs on macOS)" {
		t.Fatalf("New off a Mac: %v", err)
	}
	m := e2etest.LoadModel(t, e2etest.Stories(t), engine.LoadOptions{Device: "cpu"})
	if in := m.Info(); in.Accelerator != "" {
		t.Fatalf("backend %q", in.Backend)
	}
}

// TestEngineFaultMidAnswer: a GPU fault in the middle of an answer (the
// emulated runner fails the command buffer that holds the Nth dispatch)
// costs time only: the answer finishes on the CPU with the CPU's tokens,
// the reason reaches OnFallback and the model's notes, and the model
// stays on the CPU.
func TestEngineFaultMidAnswer(t *testing.T) {
	want := e2etest.GreedyTokens(t, e2etest.LoadModel(t, e2etest.Stories(t), engine.LoadOptions{Device: "cpu"}), 16)
	for _, at := range []string{"30", "500"} { // in the prompt; a few tokens in
		t.Run("fault at dispatch "+at, func(t *testing.T) {
			useEmu(t, emuOpts{}, "CHURON_FAKEMETAL_FAULT_AFTER", at)
			var reasons []error
			m := e2etest.LoadModel(t, e2etest.Stories(t), engine.LoadOptions{Device: "metal", GPULayers: 100, OnFallback: func(err error) { reasons = append(reasons, err) }})
			if in := m.Info(); in.OffloadedLayers != in.Layers || in.Accelerator == "" {
				t.Fatalf("before the fault: %s", in.Backend)
			}
			got := e2etest.GreedyTokens(t, m, 16)
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("tokens %v, on the CPU alone %v", got, want)
			}
			if len(reasons) != 1 || !strings.Contains(reasons[0].Error(), "kIOGPUCommandBufferCallbackErrorPageFault") ||
				!strings.Contains(reasons[0].Error(), "runs on the CPU now") {
				t.Fatalf("OnFallback got %v", reasons)
			}
			in := m.Info()
			if in.Accelerator != "" || !strings.HasPrefix(in.Backend, "CPU") {
				t.Fatalf("after the fault: %q", in.Backend)
			}
			if n := in.DeviceNotes; len(n) == 0 || !strings.Contains(n[len(n)-1], "Metal · Apple M0 (emulated)") {
				t.Fatalf("device notes %q do not say what failed", n)
			}
			t.Logf("notes: %q", in.DeviceNotes)
		})
	}
}

// TestEngineAutoOffload: with the working set room enough, every layer
// and the head go to Metal by default; with too little, the model runs on
// the CPU and says why.
func TestEngineAutoOffload(t *testing.T) {
	t.Run("fits", func(t *testing.T) {
		useEmu(t, emuOpts{})
		m := e2etest.LoadModel(t, e2etest.Stories(t), engine.LoadOptions{})
		in := m.Info()
		if in.OffloadedLayers != in.Layers || !in.OffloadedOutput || !strings.HasPrefix(in.Accelerator, "Metal · ") {
			t.Fatalf("automatic offload: %s (%q), notes %q", in.Backend, in.Accelerator, in.DeviceNotes)
		}
		t.Logf("%s · %d/%d layers", in.Accelerator, in.OffloadedLayers, in.Layers)
	})
	t.Run("no room", func(t *testing.T) {
		useEmu(t, emuOpts{workingSet: 300 << 20}) // less than the reserve
		m := e2etest.LoadModel(t, e2etest.Stories(t), engine.LoadOptions{})
		in := m.Info()
		if in.Accelerator != "" || len(in.DeviceNotes) == 0 || !strings.Contains(in.DeviceNotes[0], "not one layer fits") {
			t.Fatalf("backend %q, notes %q", in.Backend, in.DeviceNotes)
		}
	})
}

// TestMissingKernel: a library without one of the kernels (a compile
// that dropped it) fails New with the kernel's name.
func TestMissingKernel(t *testing.T) {
	r, err := newEmuRunner(t, emuOpts{missing: "attend_q8_0"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := newDevice(r); err == nil || !strings.Contains(err.Error(), "attend_q8_0") {
		t.Fatalf("newDevice: %v", err)
	}
}

// TestWrappedWeights: large matrices are wrapped where they lie (no
// copy), at their offset in the page, and multiply as copied ones do.
func TestWrappedWeights(t *testing.T) {
	defer func(n int) { wrapMin = n }(wrapMin)
	wrapMin = 4096
	r := rand.New(rand.NewPCG(31, 32))
	w := gputwin.Quantized(t, r, quant.Q4_0, 64, 1024) // 36 KiB
	w.Data = append(make([]byte, 0, len(w.Data)+100), w.Data...)
	// not page-aligned: a tensor's place in a mapped file
	w.Data = append(make([]byte, 48, 48+len(w.Data)), w.Data...)[48:]
	x := gputwin.Randn(r, 3*1024, 1)
	run := func(wrap bool) ([]float32, int64) {
		d := openEmu(t, emuOpts{wrap: wrap})
		before := d.Used()
		wt, err := d.UploadPart([]*backend.Tensor{w, gputwin.Vector("n", gputwin.Randn(rand.New(rand.NewPCG(1, 1)), 1024, 1))})
		if err != nil {
			t.Fatal(err)
		}
		used := d.Used() - before
		xb, _ := d.Alloc(len(x))
		y, _ := d.Alloc(3 * 64)
		d.Write(xb, x)
		d.MatMul(y, wt[0], xb, 3)
		out := make([]float32, 3*64)
		d.Read(out, y)
		if err := d.Sync(); err != nil {
			t.Fatal(err)
		}
		return out, used
	}
	copied, cu := run(false)
	wrapped, wu := run(true)
	chk.MustEqual(t, "wrapped weights", wrapped, copied)
	t.Logf("weights: %d bytes copied, %d bytes wrapped (pages of the host's)", cu, wu)
}

// TestDeviceLifecycle: frees wait for the queue, Sync after a failure
// keeps failing, Close twice and releases after Close are harmless.
func TestDeviceLifecycle(t *testing.T) {
	l, lerr := loadEmu(fakeLibrary(t))
	if lerr != nil {
		t.Fatal(lerr)
	}
	before := l.live() // other tests' devices may still be open
	d := openEmu(t, emuOpts{}, "CHURON_FAKEMETAL_FAULT_AFTER", "3")
	a, _ := d.Alloc(1000)
	b, _ := d.Alloc(1000)
	kv, err := d.NewKV(backend.KVSpec{Type: quant.F16, Context: 8, Dim: 64})
	if err != nil {
		t.Fatal(err)
	}
	d.Write(a, make([]float32, 1000))
	d.CopyRows(b, 1000, a, 1000, 1, 1000)
	d.Free(a) // after the copy that reads it
	if err := d.Sync(); err != nil {
		t.Fatalf("Sync before the fault: %v", err)
	}
	if d.Used() == 0 {
		t.Fatal("Used is 0 with buffers live")
	}
	d.Add(b, b) // the third dispatch: faults
	err1 := d.Sync()
	err2 := d.Sync()
	if err1 == nil || err2 == nil || !strings.Contains(err1.Error(), "command buffer failed") {
		t.Fatalf("Syncs after a fault: %v, %v", err1, err2)
	}
	if _, err := kv.AppendRows(nil, false, 0, 1); err == nil {
		t.Fatal("AppendRows on a failed device succeeded")
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	d.Free(b)
	kv.Release()
	if n := l.live(); n != before {
		t.Errorf("%d bytes of buffers live after Close, %d before the device opened", n, before)
	}
}
