package arch

import (
	"strings"
	"testing"

	"github.com/churon/churon/engine/gguf"
	"github.com/churon/churon/engine/quant"
)

// TestTensor2D: a tensor of exactly cols×rows passes, a third dimension
// or a wrong one fails the load with the shape wanted, and an absent
// optional one is nil without a failure.
func TestTensor2D(t *testing.T) {
	w := gguf.NewWriter()
	add := func(name string, shape ...uint64) {
		n := uint64(1)
		for _, d := range shape {
			n *= d
		}
		if err := w.AddTensor(name, quant.F32, shape, make([]byte, 4*n)); err != nil {
			t.Fatal(err)
		}
	}
	add("flat", 4, 3)
	add("deep", 4, 3, 2)
	add("wide", 5, 3)
	f := openWritten(t, w)
	for _, c := range []struct {
		name     string
		optional bool
		ok       bool
		fail     string
	}{
		{"flat", false, true, ""},
		{"deep", false, false, "want [4 3]"},
		{"wide", false, false, "want [4 3]"},
		{"absent", true, false, ""},
		{"absent", false, false, "missing"},
	} {
		l := &loader{f: f}
		got := l.tensor2D(c.name, c.optional, 4, 3)
		if (got != nil) != c.ok {
			t.Errorf("%s: tensor %v, want one: %v", c.name, got, c.ok)
		}
		switch {
		case c.fail == "" && l.err != nil:
			t.Errorf("%s: %v", c.name, l.err)
		case c.fail != "" && (l.err == nil || !strings.Contains(l.err.Error(), c.fail)):
			t.Errorf("%s: error %v, want one saying %q", c.name, l.err, c.fail)
		}
	}
}
