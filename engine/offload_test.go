package engine

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/churon/churon/engine/backend"
	"github.com/churon/churon/engine/backend/fake"
	"github.com/churon/churon/engine/quant"
	"github.com/churon/churon/internal/testdata"
	"github.com/churon/churon/models/synth"
)

// offloadFiles are the models the offload tests run: stories260K, every
// file of the quant zoo, and synthetic models of the other variants
// (biases, q/k norms, fused projections, tied output), a mixture of
// experts, and a Llama with every optional bias and scale.
func offloadFiles(t *testing.T) map[string]string {
	t.Helper()
	dir := testdata.Dir(t)
	files := map[string]string{"stories260K": filepath.Join(dir, "models", "stories260K.gguf")}
	zoo, _ := filepath.Glob(filepath.Join(dir, "quantzoo", "zoo-*.gguf"))
	if len(zoo) == 0 {
		t.Fatalf("no quant zoo in %s", dir)
	}
	for _, p := range zoo {
		files[strings.TrimSuffix(filepath.Base(p), ".gguf")] = p
	}
	for _, arch := range []string{"qwen2", "qwen3", "phi3", "qwen3moe"} {
		s := synth.Tiny(arch)
		if arch == "qwen2" {
			s.Tied = true
		}
		files["synth-"+arch] = synthFile(t, arch+".gguf", s)
	}
	// gemma3: sliding windows, soft-capped logits, GeGLU, scaled inputs.
	g3, err := synth.Preset("gemma3-odd", "F16", 1)
	if err != nil {
		t.Fatal(err)
	}
	files["synth-gemma3"] = synthFile(t, "gemma3.gguf", g3)
	// every optional bias and scale of a Llama block
	extras := synth.Tiny("llama")
	extras.Biases, extras.Scales = true, true
	files["synth-llama-extras"] = synthFile(t, "llama-extras.gguf", extras)
	// gpt-oss: MXFP4 experts, attention sinks and banded layers on the
	// device too.
	oss := synth.Tiny("gpt-oss")
	oss.FileType = "MXFP4_MOE"
	files["synth-gpt-oss"] = synthFile(t, "gpt-oss.gguf", oss)
	// qwen35 and qwen35moe: Gated DeltaNet layers, whose states the fake
	// device keeps, and gated attention.
	for _, shape := range []string{"qwen35-odd", "qwen35moe-odd"} {
		q, err := synth.Preset(shape, "F16", 1)
		if err != nil {
			t.Fatal(err)
		}
		files["synth-"+shape] = synthFile(t, shape+".gguf", q)
	}
	return files
}

// noDeltaNet is a device without the Gated DeltaNet operation, as the
// CUDA one is: embedding the interface hides the fake's DeltaNet.
type noDeltaNet struct{ backend.Device }

// TestOffloadWithoutDeltaNet: on a device that does not run Gated
// DeltaNet layers, a qwen35 model offloads its attention layers and its
// output head, keeps the recurrent layers on the CPU with a note saying
// so, and computes the CPU's logits bit for bit.
func TestOffloadWithoutDeltaNet(t *testing.T) {
	q, err := synth.Preset("qwen35-odd", "F16", 1)
	if err != nil {
		t.Fatal(err)
	}
	path := synthFile(t, "qwen35-odd.gguf", q)
	want := offloadRun(t, loadWith(t, path, LoadOptions{Device: "cpu"}), KVF16)
	dev := fake.New(fake.Options{})
	m := loadWith(t, path, LoadOptions{Accelerator: noDeltaNet{dev}, GPULayers: q.Layers + 1})
	in := m.Info()
	attention := q.Layers / q.FullAttnInterval
	if in.OffloadedLayers != attention || !in.OffloadedOutput {
		t.Fatalf("%d layers and output %v offloaded, want the %d attention layers and the output (%s)", in.OffloadedLayers, in.OffloadedOutput, attention, in.Backend)
	}
	note := false
	for _, n := range in.DeviceNotes {
		note = note || strings.Contains(n, "does not run Gated DeltaNet layers")
	}
	if !note {
		t.Errorf("no note about the DeltaNet layers kept on the CPU: %q", in.DeviceNotes)
	}
	sameFloats(t, in.Backend, offloadRun(t, m, KVF16), want)
	if dev.Ops() == 0 {
		t.Fatal("nothing ran on the device")
	}
}

func loadWith(t *testing.T, path string, opt LoadOptions) *Model {
	t.Helper()
	opt.Threads = 2
	m, err := Load(context.Background(), path, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// offloadRun exercises every path of a pass: a prompt in several passes
// with every position's logits, greedy decode steps, and a batched step
// of two sequences. It returns all the logits it saw, in order.
func offloadRun(t *testing.T, m *Model, kv KVType) []float32 {
	t.Helper()
	ctx := context.Background()
	vocab := m.Info().VocabSize
	prompt := snapTokens(40, vocab, 7)
	a, err := m.NewSequence(SequenceOptions{Context: 128, KVType: kv, Batch: 16})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	out, err := a.FeedAll(ctx, prompt)
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		tok := int32(argmax(a.Logits()))
		if err := a.Feed(ctx, []int32{tok}); err != nil {
			t.Fatal(err)
		}
		out = append(out, a.Logits()...)
	}
	return batchedSteps(t, m, a, SequenceOptions{Context: 128, KVType: kv}, prompt[:21], out)
}

// batchedSteps feeds a two tokens and a second sequence (made with opt)
// prompt together, then steps both three times in batched decodes, and
// appends every logit it sees to out.
func batchedSteps(t *testing.T, m *Model, a *Sequence, opt SequenceOptions, prompt []int32, out []float32) []float32 {
	t.Helper()
	ctx := context.Background()
	b, err := m.NewSequence(opt)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := m.FeedBatch(ctx, []*Sequence{a, b}, [][]int32{{3, 4}, prompt}); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		toks := []int32{int32(argmax(a.Logits())), int32(argmax(b.Logits()))}
		if err := m.DecodeBatch(ctx, []*Sequence{a, b}, toks); err != nil {
			t.Fatal(err)
		}
		out = append(append(out, a.Logits()...), b.Logits()...)
	}
	return out
}

// TestOffloadBitIdentical: with 0, 1, L/2, L and L+1 layers on the fake
// device — no crossing, a crossing before the last layer, one in the
// middle, one after the embedding with the head back on the CPU, and
// everything but the embedding offloaded — every logit equals the CPU's
// alone, bit for bit.
func TestOffloadBitIdentical(t *testing.T) {
	for name, path := range offloadFiles(t) {
		t.Run(name, func(t *testing.T) {
			kv := KVF16
			if name == "stories260K" {
				kv = KVF32
			}
			want := offloadRun(t, loadWith(t, path, LoadOptions{Device: "cpu"}), kv)
			L := loadWith(t, path, LoadOptions{Device: "cpu"}).Info().Layers
			for _, n := range []int{OffloadNone, 1, L / 2, L, L + 1} {
				dev := fake.New(fake.Options{})
				m := loadWith(t, path, LoadOptions{Accelerator: dev, GPULayers: n})
				in := m.Info()
				wantLayers := min(max(n, 0), L)
				if in.OffloadedLayers != wantLayers || in.OffloadedOutput != (n > L) {
					t.Fatalf("-ngl %d: %d layers and output %v offloaded (%s)", n, in.OffloadedLayers, in.OffloadedOutput, in.Backend)
				}
				got := offloadRun(t, m, kv)
				sameFloats(t, fmt.Sprintf("-ngl %d (%s)", n, in.Backend), got, want)
				if n > 0 && dev.Ops() == 0 {
					t.Fatalf("-ngl %d: nothing ran on the fake device", n)
				}
			}
		})
	}
}

// TestOffloadUnsupportedTypes: parts whose weights the device cannot
// multiply stay on the CPU, the others go, and the logits do not change.
func TestOffloadUnsupportedTypes(t *testing.T) {
	path := filepath.Join(testdata.Dir(t), "quantzoo", "zoo-Q4_K_M-mixed.gguf")
	cpuOnly := loadWith(t, path, LoadOptions{Device: "cpu"})
	want := offloadRun(t, cpuOnly, KVF16)
	L := cpuOnly.Info().Layers
	// Which parts hold Q6_K weights?
	holds := map[int]bool{}
	for _, p := range cpuOnly.net.Weights() {
		if p.Tensor.Type == quant.Q6_K {
			holds[p.Part] = true
		}
	}
	if len(holds) == 0 || len(holds) > L {
		t.Fatalf("the mixed file's Q6_K weights are in parts %v: the test needs some parts with and some without", holds)
	}
	wantLayers := 0
	for i := range L {
		if !holds[i] {
			wantLayers++
		}
	}
	m := loadWith(t, path, LoadOptions{Accelerator: fake.New(fake.Options{Unsupported: []quant.Type{quant.Q6_K}}), GPULayers: L + 1})
	in := m.Info()
	if in.OffloadedLayers != wantLayers || in.OffloadedOutput == holds[L] {
		t.Fatalf("%d layers and output %v offloaded, want %d and %v (Q6_K in parts %v)", in.OffloadedLayers, in.OffloadedOutput, wantLayers, !holds[L], holds)
	}
	sameFloats(t, in.Backend, offloadRun(t, m, KVF16), want)
}

// TestAutoOffloadBudgets: the automatic layer count grows with the
// device's memory, from nothing to everything, and what it picks runs
// within the budget with the CPU's logits.
func TestAutoOffloadBudgets(t *testing.T) {
	path := filepath.Join(testdata.Dir(t), "models", "stories260K.gguf")
	cpuOnly := loadWith(t, path, LoadOptions{Device: "cpu"})
	want := offloadRun(t, cpuOnly, KVF16)
	L := cpuOnly.Info().Layers
	opt := LoadOptions{Context: 128, Sequences: 2}
	// What everything needs, as the planner counts it.
	_, sizes := cpuOnly.planInputs(fake.New(fake.Options{}), opt)
	all := sizes.Fixed + sizes.Output
	for _, b := range sizes.Layer {
		all += b
	}
	prev := -1
	for _, budget := range []int64{1 << 10, sizes.Fixed, sizes.Fixed + sizes.Layer[L-1],
		sizes.Fixed + sizes.Layer[L-1] + sizes.Layer[L-2], all - 1, all, 2 * all} {
		dev := fake.New(fake.Options{Budget: budget})
		o := opt
		o.Accelerator = dev
		m := loadWith(t, path, o)
		in := m.Info()
		n := in.OffloadedLayers
		if in.OffloadedOutput {
			n++
		}
		got := offloadRun(t, m, KVF16)
		sameFloats(t, fmt.Sprintf("budget %d (%s)", budget, in.Backend), got, want)
		if _, peak := dev.Used(); peak > budget {
			t.Errorf("budget %d: the device held %d bytes at its peak", budget, peak)
		}
		switch {
		case n < prev:
			t.Errorf("budget %d: %d parts offloaded, fewer than %d with less memory", budget, n, prev)
		case budget < sizes.Fixed && n != 0:
			t.Errorf("budget %d below the scratch's %d: %d parts offloaded", budget, sizes.Fixed, n)
		case budget == sizes.Fixed+sizes.Layer[L-1] && n != 1:
			t.Errorf("budget for exactly one layer: %d parts offloaded", n)
		case budget >= all && n != L+1:
			t.Errorf("budget %d ≥ %d: only %d of %d parts offloaded", budget, all, n, L+1)
		case budget == all-1 && n == L+1:
			t.Errorf("budget one byte short of everything: everything offloaded")
		}
		if n == 0 && (len(in.DeviceNotes) == 0 || !strings.Contains(in.DeviceNotes[0], "fits")) {
			t.Errorf("budget %d: nothing offloaded and no note why: %q", budget, in.DeviceNotes)
		}
		prev = n
	}
}

// faultRun generates greedily and returns the tokens and the last logits.
func faultRun(t *testing.T, m *Model, prompt []int32, n int) ([]int32, []float32, error) {
	t.Helper()
	seq, err := m.NewSequence(SequenceOptions{Context: 256})
	if err != nil {
		t.Fatal(err)
	}
	res, err := seq.Generate(context.Background(), prompt, GenerateOptions{MaxTokens: n, Sampling: greedy, IgnoreEOS: true}, nil)
	if err != nil {
		return nil, nil, err
	}
	toks := res.Tokens
	if len(toks) != n {
		t.Fatalf("generated %d tokens, want %d", len(toks), n)
	}
	// A follow-up after the answer works from the rebuilt cache.
	if err := seq.Feed(context.Background(), []int32{5, 6, 7}); err != nil {
		return nil, nil, err
	}
	return toks, append([]float32(nil), seq.Logits()...), nil
}

// TestFaultMidAnswer: a device that fails for good in the middle of an
// answer costs nothing but time: the answer finishes on the CPU with the
// same tokens, the reason reaches OnFallback and the model's info, and
// the model stays on the CPU.
func TestFaultMidAnswer(t *testing.T) {
	path := filepath.Join(testdata.Dir(t), "models", "stories260K.gguf")
	m0 := loadWith(t, path, LoadOptions{Device: "cpu"})
	prompt := snapTokens(20, m0.Info().VocabSize, 3)
	want, wantLogits, err := faultRun(t, m0, prompt, 24)
	if err != nil {
		t.Fatal(err)
	}
	// Count the operations of a prompt and of one decode step.
	probe := fake.New(fake.Options{})
	mp := loadWith(t, path, LoadOptions{Accelerator: probe, GPULayers: 100})
	seq, _ := mp.NewSequence(SequenceOptions{Context: 256})
	_ = seq.Feed(context.Background(), prompt)
	afterPrompt := probe.Ops()
	_ = seq.Feed(context.Background(), []int32{1})
	perStep := probe.Ops() - afterPrompt

	for _, at := range []int{afterPrompt / 2, afterPrompt + 10*perStep + perStep/2} {
		t.Run(fmt.Sprintf("fault at op %d", at), func(t *testing.T) {
			var reasons []error
			dev := fake.New(fake.Options{FaultAfter: at})
			m := loadWith(t, path, LoadOptions{Accelerator: dev, GPULayers: 100, OnFallback: func(err error) { reasons = append(reasons, err) }})
			got, logits, err := faultRun(t, m, prompt, 24)
			if err != nil {
				t.Fatalf("the answer failed: %v", err)
			}
			if !dev.Faulted() {
				t.Fatal("the fault was not reached")
			}
			if len(reasons) != 1 || !errors.Is(reasons[0], fake.ErrFault) {
				t.Fatalf("OnFallback got %v, want one reason wrapping the fault", reasons)
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("tokens %v, on the CPU alone %v", got, want)
			}
			// The cache was rebuilt by a prompt pass rather than step by step,
			// which may move the last bits on CPUs with tile kernels.
			if d := maxAbsDiff(logits, wantLogits); d > 1e-4 {
				t.Fatalf("logits after a follow-up differ by %g from the CPU's", d)
			}
			in := m.Info()
			if in.Accelerator != "" || in.OffloadedLayers != 0 || !strings.HasPrefix(in.Backend, "CPU") {
				t.Fatalf("after the fault: accelerator %q, %d layers, backend %q", in.Accelerator, in.OffloadedLayers, in.Backend)
			}
			if len(in.DeviceNotes) == 0 || !strings.Contains(in.DeviceNotes[len(in.DeviceNotes)-1], "fake GPU failed") {
				t.Fatalf("device notes %q do not say what failed", in.DeviceNotes)
			}
		})
	}
}

// TestSnapshotAcrossDevices: a snapshot of a sequence whose layers live
// on the fake device is byte for byte the CPU's, and restores on the CPU
// to a sequence that continues exactly as the CPU's; and back. The window
// models' sequences have wrapped their rings.
func TestSnapshotAcrossDevices(t *testing.T) {
	ctx := context.Background()
	type snapCase struct {
		path   string
		ctx, n int // context and prompt
	}
	cases := map[string]snapCase{
		"stories260K": {filepath.Join(testdata.Dir(t), "models", "stories260K.gguf"), 96, 30},
		"zoo-Q4_K":    {filepath.Join(testdata.Dir(t), "quantzoo", "zoo-Q4_K.gguf"), 96, 30},
	}
	for name, spec := range ringSpecs(t) {
		cases[name+"-rings"] = snapCase{synthFile(t, name+".gguf", spec), ringCtx, 1000}
	}
	for name, sc := range cases {
		path := sc.path
		t.Run(name, func(t *testing.T) {
			onCPU := loadWith(t, path, LoadOptions{Device: "cpu"})
			L := onCPU.Info().Layers
			onFake := loadWith(t, path, LoadOptions{Accelerator: fake.New(fake.Options{}), GPULayers: L + 1})
			half := loadWith(t, path, LoadOptions{Accelerator: fake.New(fake.Options{}), GPULayers: L / 2})
			prompt := snapTokens(sc.n, onCPU.Info().VocabSize, 11)
			opt := SequenceOptions{Context: sc.ctx}
			write := func(m *Model) []byte {
				s, err := m.NewSequence(opt)
				if err != nil {
					t.Fatal(err)
				}
				if err := s.Feed(ctx, prompt); err != nil {
					t.Fatal(err)
				}
				return snapshotBytes(t, s)
			}
			cont := func(m *Model, snap []byte) []float32 {
				s, err := m.ReadSnapshot(strings.NewReader(string(snap)), opt)
				if err != nil {
					t.Fatal(err)
				}
				var out []float32
				for _, tok := range []int32{9, 10, 11} {
					if err := s.Feed(ctx, []int32{tok}); err != nil {
						t.Fatal(err)
					}
					out = append(out, s.Logits()...)
				}
				return out
			}
			snapCPU := write(onCPU)
			want := cont(onCPU, snapCPU)
			for _, m := range []*Model{onFake, half} {
				snap := write(m)
				if string(snap) != string(snapCPU) {
					t.Fatalf("%s: the snapshot differs from the CPU's", m.Info().Backend)
				}
				sameFloats(t, "restored on the CPU from "+m.Info().Backend, cont(onCPU, snap), want)
				sameFloats(t, "restored on "+m.Info().Backend+" from the CPU", cont(m, snapCPU), want)
			}
		})
	}
}

// TestDeviceChoice: "cpu" uses no accelerator; a name nobody registered
// fails the load with a reason; the CPU alone describes itself as before.
func TestDeviceChoice(t *testing.T) {
	path := filepath.Join(testdata.Dir(t), "models", "stories260K.gguf")
	m := loadWith(t, path, LoadOptions{Device: "cpu"})
	if in := m.Info(); in.Accelerator != "" || !strings.HasPrefix(in.Backend, "CPU ") {
		t.Fatalf("cpu: %+v", in)
	}
	_, err := Load(context.Background(), path, LoadOptions{Device: "warp-drive"})
	if !errors.Is(err, backend.ErrNoBackend) || !strings.Contains(err.Error(), "warp-drive") {
		t.Fatalf("an unknown device: %v", err)
	}
	if devs := Devices(1); len(devs) == 0 || devs[0].Backend != "cpu" || devs[0].Device == "" {
		t.Fatalf("Devices: %+v", devs)
	}
}

// TestCacheOutOfDeviceMemory: a sequence whose cache does not fit on the
// accelerator moves the model to the CPU rather than fail; the sequences
// made before go on there with the CPU's logits.
func TestCacheOutOfDeviceMemory(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(testdata.Dir(t), "models", "stories260K.gguf")
	cpuOnly := loadWith(t, path, LoadOptions{Device: "cpu"})
	L := cpuOnly.Info().Layers
	prompt := snapTokens(12, cpuOnly.Info().VocabSize, 5)
	run := func(m *Model, seqs ...*Sequence) []float32 {
		var out []float32
		for _, s := range seqs {
			if err := s.Feed(ctx, prompt); err != nil {
				t.Fatal(err)
			}
			out = append(out, s.Logits()...)
		}
		return out
	}
	// What one sequence's run takes on the device, measured.
	probe := fake.New(fake.Options{})
	pm := loadWith(t, path, LoadOptions{Accelerator: probe, GPULayers: L + 1})
	ps := must(pm.NewSequence(SequenceOptions{Context: 128}))
	run(pm, ps)
	_, peak := probe.Used()
	var reasons []error
	opt := LoadOptions{GPULayers: L + 1, OnFallback: func(err error) { reasons = append(reasons, err) }}
	opt.Accelerator = fake.New(fake.Options{Budget: peak + ps.KVBytes()/2})
	m := loadWith(t, path, opt)
	a := must(m.NewSequence(SequenceOptions{Context: 128}))
	got := run(m, a)
	if m.Info().Accelerator == "" {
		t.Fatal("the first sequence already left the accelerator")
	}
	b, err := m.NewSequence(SequenceOptions{Context: 128})
	if err != nil {
		t.Fatalf("a second sequence that does not fit on the device: %v", err)
	}
	if len(reasons) != 1 || !errors.Is(reasons[0], backend.ErrOutOfMemory) || m.Info().Accelerator != "" {
		t.Fatalf("fallback reasons %v, accelerator %q", reasons, m.Info().Accelerator)
	}
	got = append(got, run(m, a, b)...)
	a0 := must(cpuOnly.NewSequence(SequenceOptions{Context: 128}))
	b0 := must(cpuOnly.NewSequence(SequenceOptions{Context: 128}))
	want := run(cpuOnly, a0)
	want = append(want, run(cpuOnly, a0, b0)...)
	if d := maxAbsDiff(got, want); d > 1e-4 {
		t.Fatalf("logits differ from the CPU's by %g", d)
	}
}
