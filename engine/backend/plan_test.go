package backend_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/churon/churon/engine/backend"
	"github.com/churon/churon/engine/backend/cpu"
	"github.com/churon/churon/engine/backend/fake"
	"github.com/churon/churon/engine/quant"
)

// TestOffloadRule is llama.cpp's -ngl: the last n layers, then the output
// head; parts the device cannot run stay on the host.
func TestOffloadRule(t *testing.T) {
	host, gpu := cpu.NewDevice(1), fake.New(fake.Options{Name: "G"})
	defer host.Close()
	defer gpu.Close()
	const L = 4
	// The plan as a string: one letter a part, embedding first, head last.
	show := func(p *backend.Plan) string {
		var b strings.Builder
		for i := -1; i <= L; i++ {
			if p.Stage(i) == backend.Device(gpu) {
				b.WriteByte('G')
			} else {
				b.WriteByte('c')
			}
		}
		return b.String()
	}
	for _, tc := range []struct {
		n         int
		skip      []int // stages the device cannot run
		want      string
		crossings int
	}{
		{0, nil, "cccccc", 0},
		{1, nil, "ccccGc", 2},
		{2, nil, "cccGGc", 2},
		{4, nil, "cGGGGc", 2},
		{5, nil, "cGGGGG", 1},
		{99, nil, "cGGGGG", 1},
		{5, []int{2}, "cGGcGG", 3},
		{5, []int{4}, "cGGGGc", 2},
		{-3, nil, "cccccc", 0},
	} {
		t.Run(fmt.Sprintf("n=%d,skip=%v", tc.n, tc.skip), func(t *testing.T) {
			runs := func(stage int) bool {
				for _, s := range tc.skip {
					if s == stage {
						return false
					}
				}
				return true
			}
			p := backend.Offload(host, gpu, L, tc.n, runs)
			if got := show(p); got != tc.want {
				t.Errorf("plan %s, want %s", got, tc.want)
			}
			if got := p.Crossings(); got != tc.crossings {
				t.Errorf("%d crossings, want %d", got, tc.crossings)
			}
		})
	}
}

func TestAutoOffload(t *testing.T) {
	s := backend.Sizes{Layer: []int64{10, 20, 30}, Output: 100, Fixed: 5}
	all := func(int) bool { return true }
	for _, tc := range []struct {
		free int64
		runs func(int) bool
		want int
	}{
		{-1, all, 4},  // a device that does not plan by memory takes everything
		{4, all, 0},   // not even the scratch fits
		{34, all, 0},  // the last layer needs 5 + 30
		{35, all, 1},  // exactly the last layer
		{54, all, 1},  // 5 + 30 + 20 = 55
		{55, all, 2},  // two layers
		{65, all, 3},  // all three layers
		{164, all, 3}, // the head needs 100 more
		{165, all, 4}, // everything
		// A layer that stays on the host costs the device nothing.
		{35, func(st int) bool { return st != 1 }, 2},
		{45, func(st int) bool { return st != 1 }, 3},
	} {
		if got := backend.AutoOffload(tc.free, s, tc.runs); got != tc.want {
			t.Errorf("free %d: %d parts, want %d", tc.free, got, tc.want)
		}
	}
}

func TestPlanString(t *testing.T) {
	host, gpu := cpu.NewDevice(1), fake.New(fake.Options{Name: "G"})
	defer host.Close()
	defer gpu.Close()
	if got := backend.Single(host, 3).String(); got != host.Name() {
		t.Errorf("CPU alone: %q", got)
	}
	want := host.Name() + ": embedding, 1/3 layers, output · G: 2/3 layers"
	if got := backend.Offload(host, gpu, 3, 2, nil).String(); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	want = host.Name() + ": embedding · G: 3/3 layers, output"
	if got := backend.Offload(host, gpu, 3, 4, nil).String(); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestNewCacheFreesOnFailure: a cache that does not fit leaves nothing
// allocated on any device.
func TestNewCacheFreesOnFailure(t *testing.T) {
	host := cpu.NewDevice(1)
	defer host.Close()
	spec := &backend.KVSpec{Type: quant.F16, Context: 16, Dim: 32}
	gpu := fake.New(fake.Options{Budget: 2*spec.Bytes() + 1})
	defer gpu.Close()
	p := backend.Offload(host, gpu, 4, 3, nil)
	specs := make([]backend.LayerSpec, 4)
	for i := range specs {
		specs[i].KV = spec
	}
	if _, err := backend.NewCache(p, specs); !errors.Is(err, backend.ErrOutOfMemory) || !strings.Contains(err.Error(), "layer 3") {
		t.Fatalf("err = %v, want layer 3 out of memory", err)
	}
	if used, _ := gpu.Used(); used != 0 {
		t.Fatalf("%d bytes left allocated", used)
	}
	specs[0].StateBytes = 7
	p = backend.Offload(host, gpu, 4, 2, nil)
	c, err := backend.NewCache(p, specs)
	if err != nil {
		t.Fatal(err)
	}
	if c.Layer(0).State == nil || c.Layer(1).State != nil || c.Bytes() != 4*spec.Bytes()+7 {
		t.Fatalf("cache: state %v, %d bytes", c.Layer(0).State, c.Bytes())
	}
	c.Release()
	c.Release()
	if used, _ := gpu.Used(); used != 0 {
		t.Fatalf("%d bytes left after Release", used)
	}
}

func TestRegistry(t *testing.T) {
	backend.Register("test-broken", func() (backend.Device, error) { return nil, errors.New("libtest.so.1: cannot open shared object file") })
	backend.Register("test-panics", func() (backend.Device, error) { panic("bad binding") })
	backend.Register("test-works", func() (backend.Device, error) { return fake.New(fake.Options{Name: "works"}), nil })
	defer func() {
		if recover() == nil {
			t.Error("a second registration under one name did not panic")
		}
	}()
	rs := backend.ProbeAll(true)
	if len(rs) != 3 || rs[0].Err == nil || !strings.Contains(rs[1].Err.Error(), "bad binding") || rs[2].Device == nil {
		t.Fatalf("ProbeAll: %+v", rs)
	}
	rs[2].Device.Close()
	if _, err := backend.ProbeNamed("nope"); !errors.Is(err, backend.ErrNoBackend) {
		t.Errorf("ProbeNamed(nope): %v", err)
	}
	if d, err := backend.ProbeNamed("test-works"); err != nil || d.Name() != "works" {
		t.Errorf("ProbeNamed(test-works): %v", err)
	} else {
		d.Close()
	}
	backend.Register("test-works", nil)
}
