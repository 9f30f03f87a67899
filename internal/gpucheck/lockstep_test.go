package gpucheck

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/churon/churon/engine"
	"github.com/churon/churon/engine/backend"
	"github.com/churon/churon/engine/backend/cpu"
	"github.com/churon/churon/engine/backend/fake"
	"github.com/churon/churon/internal/testdata"
)

// offByOne is a device whose matrix products of one weight are slightly
// wrong.
type offByOne struct {
	*fake.Device
	name string
}

func (d *offByOne) MatMul(dst backend.Buf, w backend.Weight, x backend.Buf, n int) {
	d.Device.MatMul(dst, w, x, n)
	if w.Tensor().Name == d.name {
		d.Device.Scale(dst, 1.001)
	}
}

// TestLockstep: a device that computes as the CPU passes every
// operation; one with a wrong product is caught at that product, and
// only there (each operation is judged on the reference's inputs).
func TestLockstep(t *testing.T) {
	path := filepath.Join(testdata.Dir(t), "models", "stories260K.gguf")
	for _, tc := range []struct {
		dev  backend.Device
		want string // "" for no report
	}{
		{fake.New(fake.Options{}), ""},
		{&offByOne{fake.New(fake.Options{}), "blk.1.ffn_down.weight"}, "MatMul blk.1.ffn_down.weight"},
	} {
		var reports []string
		ls := &Lockstep{Test: tc.dev, Ref: cpu.NewDevice(1), Tol: 1e-7, Report: func(op string, n int, rel float64) {
			reports = append(reports, op)
		}}
		m, err := engine.Load(context.Background(), path, engine.LoadOptions{Accelerator: ls, GPULayers: 100, Threads: 1})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := scenario(context.Background(), m, engine.KVF16, nil); err != nil {
			t.Fatal(err)
		}
		m.Close()
		if tc.want == "" && len(reports) > 0 {
			t.Errorf("a device equal to the CPU was reported: %q", reports[:min(3, len(reports))])
		}
		if tc.want != "" {
			if len(reports) == 0 {
				t.Fatalf("the wrong product was not caught")
			}
			for _, r := range reports {
				if !strings.HasPrefix(r, tc.want) {
					t.Errorf("reported %q, want only %q", r, tc.want)
				}
			}
		}
	}
}
