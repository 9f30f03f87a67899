package session

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	api "github.com/churon/churon/app/api/session"
	"github.com/churon/churon/engine/backend"
	"github.com/churon/churon/engine/backend/fake"
	"github.com/churon/churon/internal/testdata"
)

// testGPUFaultAfter switches the test accelerator on: its probe fails
// while it is 0, so the other tests, which load with the default device
// choice, run on the CPU.
var testGPUFaultAfter atomic.Int64

func init() {
	backend.Register("test-gpu", func() (backend.Device, error) {
		n := testGPUFaultAfter.Load()
		if n == 0 {
			return nil, errors.New("switched off outside TestGPUFaultMidAnswer")
		}
		return fake.New(fake.Options{Name: "test GPU", FaultAfter: int(n)}), nil
	})
}

// TestGPUFaultMidAnswer: the accelerator fails for good while an answer
// streams. The answer still ends as it would have on the CPU, is stored
// whole, the person is told what happened (DeviceFallback, then the new
// placement), and the conversation goes on on the CPU.
func TestGPUFaultMidAnswer(t *testing.T) {
	path := testdata.Stories260K(t)
	set := greedy(48)
	want := reference(t, path, set, "Once upon a time")
	want2 := reference(t, path, set, "Once upon a time", want, "Tell me more")

	// About 70 operations a decode step on stories260K: the fault comes
	// some tokens into the answer.
	testGPUFaultAfter.Store(1500)
	defer testGPUFaultAfter.Store(0)
	f := newFixture(t, Options{Device: "test-gpu", GPULayers: 100})
	info := f.load(path)
	if info.Accelerator != "test GPU" || info.OffloadedLayers != info.Layers || !info.OffloadedOutput {
		t.Fatalf("loaded on %q (%d of %d layers, output %v): %s", info.Accelerator, info.OffloadedLayers, info.Layers, info.OffloadedOutput, info.Backend)
	}
	conv := f.conv(set)
	if _, err := f.m.Send(conv, "Once upon a time"); err != nil {
		t.Fatal(err)
	}
	evs := f.ev.until(t, isDone(conv))
	tr := collect(t, evs, conv)
	if tr.done.Reason != api.ReasonLength || tr.done.Err != nil {
		t.Fatalf("the answer ended with %+v", tr.done)
	}
	if tr.text != want {
		t.Fatalf("answer %q, on the CPU alone %q", tr.text, want)
	}
	var tokensBefore, fallback, after = 0, -1, -1
	for i, ev := range evs {
		switch e := ev.(type) {
		case api.Token:
			if fallback < 0 {
				tokensBefore += e.Tokens
			}
		case api.DeviceFallback:
			if !errors.Is(e.Err, fake.ErrFault) || e.Path != path || !strings.Contains(e.Err.Error(), "test GPU failed") {
				t.Fatalf("DeviceFallback %+v", e)
			}
			fallback = i
		case api.ModelLoaded:
			if fallback >= 0 {
				after = i
				if e.Info.Accelerator != "" || !strings.HasPrefix(e.Info.Backend, "CPU") || len(e.Info.DeviceNotes) == 0 {
					t.Fatalf("after the fault the model is on %q (%s), notes %q", e.Info.Accelerator, e.Info.Backend, e.Info.DeviceNotes)
				}
			}
		}
	}
	if fallback < 0 || after < 0 {
		t.Fatalf("no DeviceFallback and new placement among the answer's events: %s", describe(evs))
	}
	if tokensBefore == 0 {
		t.Fatalf("the fault came before the answer streamed: not mid-answer")
	}
	if msgs := f.messages(conv); len(msgs) != 2 || msgs[1].Content != want || msgs[1].FinishReason != "length" {
		t.Fatalf("stored %+v", msgs)
	}
	tr2 := f.send(conv, "Tell me more")
	if tr2.text != want2 {
		t.Fatalf("follow-up %q, on the CPU alone %q", tr2.text, want2)
	}
	if st, _ := f.m.Status(); st.Model == nil || st.Model.Accelerator != "" {
		t.Fatalf("status after the fault: %+v", st.Model)
	}
}
