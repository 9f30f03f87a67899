package arch

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/churon/churon/engine/backend"
	"github.com/churon/churon/engine/backend/cpu"
	"github.com/churon/churon/engine/backend/fake"
	"github.com/churon/churon/engine/quant"
)

// moeCase builds one layer's experts from random values, as the engine
// holds them (typ for the expert matrices) and as float64 values for the
// oracle (the dequantized weights).
type moeCase struct {
	name                string
	spec                MoESpec
	embd, n, k, ff      int
	typ                 quant.Type
	routerBias, selBias bool
	fused, biases       bool
	scales, shared      bool
	sharedGate          bool
	tol                 float64
}

func (tc moeCase) build(t *testing.T, r *rand.Rand) (*moe, naiveExperts) {
	t.Helper()
	m := &moe{spec: tc.spec, experts: tc.n, used: tc.k, ff: tc.ff, embd: tc.embd}
	ne := naiveExperts{spec: tc.spec, n: tc.n, k: tc.k, ff: tc.ff}
	values := func(n int, std float64) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(r.NormFloat64() * std)
		}
		return v
	}
	// tensor quantizes v to typ and returns it with its dequantized values.
	tensor := func(name string, typ quant.Type, v []float32, ne ...int) (*weight, []float64) {
		rowBytes, ok := typ.RowSize(ne[0])
		if !ok {
			t.Fatalf("%s: %d columns are not whole %v blocks", name, ne[0], typ)
		}
		data := make([]byte, rowBytes*len(v)/ne[0])
		if err := quant.Quantize(typ, v, data); err != nil {
			t.Fatal(err)
		}
		back := make([]float32, len(v))
		if err := quant.Dequantize(typ, data, back); err != nil {
			t.Fatal(err)
		}
		bt := &backend.Tensor{Name: name, Type: typ, Ne: [4]int{1, 1, 1, 1}, Data: data}
		copy(bt.Ne[:], ne)
		f := make([]float64, len(back))
		for i, x := range back {
			f[i] = float64(x)
		}
		return &weight{t: bt}, f
	}
	host := func(v []float32) []float64 {
		f := make([]float64, len(v))
		for i, x := range v {
			f[i] = float64(x)
		}
		return f
	}
	E, D, F := tc.n, tc.embd, tc.ff
	m.router, ne.router = tensor("router", quant.F32, values(E*D, 0.3), D, E)
	if tc.routerBias {
		m.routerB = values(E, 0.5)
		ne.routerB = host(m.routerB)
	}
	if tc.selBias {
		m.selB = values(E, 0.2)
		ne.selB = host(m.selB)
	}
	if tc.fused {
		m.gateUp, ne.gateUp = tensor("gate_up", tc.typ, values(E*2*F*D, 0.15), D, 2*F, E)
	} else {
		m.gate, ne.gate = tensor("gate", tc.typ, values(E*F*D, 0.15), D, F, E)
		m.up, ne.up = tensor("up", tc.typ, values(E*F*D, 0.15), D, F, E)
	}
	m.down, ne.down = tensor("down", tc.typ, values(E*D*F, 0.15), F, D, E)
	if tc.biases {
		if tc.fused {
			// the fused bias holds the gate's then the up's row per expert
			m.gateUpB, _ = tensor("gate_up_b", quant.F32, values(E*2*F, 0.3), 2*F, E)
			gub := m.gateUpB.t
			all := make([]float32, E*2*F)
			if err := quant.Dequantize(quant.F32, gub.Data, all); err != nil {
				t.Fatal(err)
			}
			ne.gateB, ne.upB = make([]float64, E*F), make([]float64, E*F)
			for e := range E {
				for j := range F {
					ne.gateB[e*F+j] = float64(all[e*2*F+j])
					ne.upB[e*F+j] = float64(all[e*2*F+F+j])
				}
			}
		} else {
			m.gateB, ne.gateB = tensor("gate_b", quant.F32, values(E*F, 0.3), F, E)
			m.upB, ne.upB = tensor("up_b", quant.F32, values(E*F, 0.3), F, E)
		}
		m.downB, ne.downB = tensor("down_b", quant.F32, values(E*D, 0.3), D, E)
	}
	if tc.scales {
		for _, p := range []struct {
			dst *[]float32
			f   *[]float64
		}{{&m.gateS, &ne.gateS}, {&m.upS, &ne.upS}, {&m.downS, &ne.downS}} {
			*p.dst = values(E, 1)
			for i := range *p.dst {
				(*p.dst)[i] += 1.5
			}
			*p.f = host(*p.dst)
		}
	}
	if tc.shared {
		m.shFF, ne.shFF = 48, 48
		m.shGate, ne.shGate = tensor("sh_gate", tc.typ, values(48*D, 0.15), D, 48)
		m.shUp, ne.shUp = tensor("sh_up", tc.typ, values(48*D, 0.15), D, 48)
		m.shDown, ne.shDn = tensor("sh_down", tc.typ, values(D*48, 0.15), 48, D)
		if tc.sharedGate {
			m.shInp, ne.shInp = tensor("sh_inp", quant.F32, values(D, 0.3), D, 1)
		}
		if tc.scales {
			for i := range m.shS {
				m.shS[i] = 0.5 + float32(i)
				ne.shS[i] = float64(m.shS[i])
			}
		}
	}
	return m, ne
}

// place uploads the layer's weights to dev, as Model.Place does.
func (m *moe) placeOn(t *testing.T, dev backend.Device) {
	t.Helper()
	for _, w := range []*weight{m.router, m.gate, m.up, m.down, m.gateUp, m.gateB, m.upB, m.downB, m.gateUpB, m.shGate, m.shUp, m.shDown, m.shInp} {
		if w == nil {
			continue
		}
		on, err := dev.Upload(w.t)
		if err != nil {
			t.Fatal(err)
		}
		w.on, w.dev = on, dev
	}
}

// run feeds the rows of xs (n×embd) through the layer on dev in one
// batch and returns its output.
func (m *moe) run(t *testing.T, dev backend.Device, s *Scratch, xs []float32, n int) []float32 {
	t.Helper()
	ds := s.on(dev)
	xn, err := dev.Alloc(n * m.embd)
	if err != nil {
		t.Fatal(err)
	}
	x, err := dev.Alloc(n * m.embd)
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Free(xn)
	defer dev.Free(x)
	dev.Write(xn, xs)
	dev.Write(x, make([]float32, n*m.embd))
	if err := m.forward(s, dev, ds, xn, x, n); err != nil {
		t.Fatal(err)
	}
	out := make([]float32, n*m.embd)
	dev.Read(out, x)
	if err := dev.Sync(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestMoEMatchesNaive checks the mixture of experts against a float64
// oracle for every router, weight rule and optional tensor, on the CPU
// and on the fake accelerator, with the tokens of a batch routed to
// different experts, and checks that a token's output does not depend on
// the batch it came in (grouping by expert must not change it).
func TestMoEMatchesNaive(t *testing.T) {
	cases := []moeCase{
		{name: "softmax-norm", spec: MoESpec{Gating: GateSoftmax, NormWeights: true}, embd: 64, n: 8, k: 2, ff: 32, typ: quant.F32, tol: 1e-4},
		{name: "softmax-scaled", spec: MoESpec{Gating: GateSoftmax, WeightScale: 2.5}, embd: 64, n: 6, k: 3, ff: 40, typ: quant.F32, tol: 1e-4},
		{name: "softmax-selected-biases", spec: MoESpec{Gating: GateSoftmaxSelected, Act: Activation{Kind: ActSwiGLUClamped, Alpha: 1.702, Limit: 0.3}},
			embd: 64, n: 8, k: 4, ff: 32, typ: quant.F32, routerBias: true, biases: true, tol: 1e-4},
		{name: "sigmoid-selection-bias", spec: MoESpec{Gating: GateSigmoid, NormWeights: true, WeightScale: 1.5}, embd: 64, n: 16, k: 4, ff: 32,
			typ: quant.F32, selBias: true, tol: 1e-4},
		{name: "fused-biases", spec: MoESpec{Gating: GateSoftmax, NormWeights: true}, embd: 64, n: 5, k: 2, ff: 24, typ: quant.F32,
			fused: true, biases: true, tol: 1e-4},
		{name: "scales", spec: MoESpec{Gating: GateSoftmax, NormWeights: true}, embd: 32, n: 4, k: 2, ff: 16, typ: quant.F32, scales: true,
			shared: true, sharedGate: true, tol: 1e-4},
		{name: "shared-gated", spec: MoESpec{Gating: GateSoftmax, NormWeights: true}, embd: 64, n: 8, k: 2, ff: 32, typ: quant.F32,
			shared: true, sharedGate: true, tol: 1e-4},
		{name: "shared-ungated", spec: MoESpec{Gating: GateSoftmax}, embd: 64, n: 8, k: 2, ff: 32, typ: quant.F32, shared: true, tol: 1e-4},
		// F16 experts of odd sizes: slices start at any byte offset (an
		// expert's gate is 21×38×2 bytes)
		{name: "f16-odd", spec: MoESpec{Gating: GateSoftmax, NormWeights: true}, embd: 38, n: 5, k: 2, ff: 21, typ: quant.F16, biases: true, tol: 2e-3},
		// quantized experts, Q8_0 and Q4_K; activations are rounded to 8
		// bits, as llama.cpp does
		{name: "q8_0", spec: MoESpec{Gating: GateSoftmax, NormWeights: true}, embd: 96, n: 7, k: 3, ff: 32, typ: quant.Q8_0, tol: 3e-2},
		{name: "q4_k", spec: MoESpec{Gating: GateSoftmax, NormWeights: true}, embd: 256, n: 5, k: 2, ff: 256, typ: quant.Q4_K, tol: 3e-2},
	}
	const n = 21 // more than a tile of 16 rows, so some experts get many
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, uint64(len(tc.name))))
			xs := normals(r, n*tc.embd)
			m, ne := tc.build(t, r)
			for _, dev := range []backend.Device{cpu.NewDevice(2), fake.New(fake.Options{})} {
				t.Run(fmt.Sprintf("%T", dev), func(t *testing.T) {
					defer dev.Close()
					m.placeOn(t, dev)
					var s Scratch
					got := m.run(t, dev, &s, xs, n)
					used := chosenExperts(&s, n*tc.k)
					if len(used) < 2 {
						t.Fatalf("the batch used %d experts: the test routes too little", len(used))
					}
					for i := range n {
						x := make([]float64, tc.embd)
						for j := range x {
							x[j] = float64(xs[i*tc.embd+j])
						}
						want := naiveMoE(ne, x)
						var maxDiff, scale float64
						for j, w := range want {
							maxDiff = math.Max(maxDiff, math.Abs(float64(got[i*tc.embd+j])-w))
							scale = math.Max(scale, math.Abs(w))
						}
						if maxDiff > tc.tol*math.Max(1, scale) {
							t.Fatalf("row %d: max |diff| %.3g (largest value %.3g) vs the float64 oracle", i, maxDiff, scale)
						}
					}
					// Each row alone, then a short batch: the same bits as in
					// the batch when the kernels are the same (fewer than 16
					// rows per expert in both).
					for i := range 3 {
						one := m.run(t, dev, &s, xs[i*tc.embd:(i+1)*tc.embd], 1)
						few := m.run(t, dev, &s, xs[:3*tc.embd], 3)
						for j := range one {
							if one[j] != few[i*tc.embd+j] {
								t.Fatalf("row %d alone and in a batch of 3 differ at %d: %v vs %v", i, j, one[j], few[i*tc.embd+j])
							}
						}
					}
				})
			}
		})
	}
}

// normals is n draws of a standard normal from r.
func normals(r *rand.Rand, n int) []float32 {
	xs := make([]float32, n)
	for i := range xs {
		xs[i] = float32(r.NormFloat64())
	}
	return xs
}

// chosenExperts is the set of experts the last MoE pass chose, over its
// first picks (rows × experts a row) selections.
func chosenExperts(s *Scratch, picks int) map[int32]bool {
	set := map[int32]bool{}
	for _, e := range s.moe.sel[:picks] {
		set[e] = true
	}
	return set
}

// TestMoEReadsOnlyChosenExperts: the experts no token chose may hold
// anything — NaNs here — without changing a bit of the output, so their
// weights are not part of any product (the point of a mixture of
// experts: a token reads its experts' weights only).
func TestMoEReadsOnlyChosenExperts(t *testing.T) {
	tc := moeCase{spec: MoESpec{Gating: GateSoftmax, NormWeights: true}, embd: 64, n: 16, k: 2, ff: 32, typ: quant.F32}
	r := rand.New(rand.NewPCG(3, 4))
	m, _ := tc.build(t, r)
	const n = 3
	xs := normals(r, n*tc.embd)
	dev := cpu.NewDevice(2)
	defer dev.Close()
	m.placeOn(t, dev)
	var s Scratch
	want := m.run(t, dev, &s, xs, n)
	chosen := chosenExperts(&s, n*tc.k)
	if len(chosen) >= tc.n {
		t.Fatal("every expert was chosen: nothing to poison")
	}
	nan := math.Float32bits(float32(math.NaN()))
	for _, w := range []*weight{m.gate, m.up, m.down} {
		per := len(w.t.Data) / tc.n
		for e := range tc.n {
			if chosen[int32(e)] {
				continue
			}
			d := w.t.Data[e*per : (e+1)*per]
			for i := 0; i+4 <= len(d); i += 4 {
				d[i], d[i+1], d[i+2], d[i+3] = byte(nan), byte(nan>>8), byte(nan>>16), byte(nan>>24)
			}
		}
	}
	got := m.run(t, dev, &s, xs, n)
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("value %d: %v with the unchosen experts poisoned, %v before", i, got[i], want[i])
		}
	}
}
