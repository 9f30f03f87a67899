// Command gpucheck checks a GPU backend on a machine with the GPU, from
// prepared binaries (no Go toolchain there): the CUDA backend on Linux
// and Windows, the Metal backend on macOS (gpu_*.go). It reports what the
// driver and GPU are, end-to-end logits against the CPU at every offload
// level, and speed on synthetic models of real shapes. run.sh is the one
// command that runs it all; see README.md (and packaging/macos/README.md
// for a Mac).
//
//	gpucheck smoke                      the GPU, the driver, the JIT's time
//	gpucheck e2e MODEL.gguf...          logits against the CPU (internal/gpucheck)
//	gpucheck synth -o DIR SHAPE:TYPE[:layers=N]...   write the benchmark models
//	gpucheck perf -json F DIR/*.gguf    pp/tg tokens/s, bandwidth share
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/churon/churon/engine"
	"github.com/churon/churon/engine/gguf"
	"github.com/churon/churon/internal/gpucheck"
	"github.com/churon/churon/models/synth"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: gpucheck smoke | e2e MODEL... | synth -o DIR SHAPE:TYPE... | perf [-json F] MODEL...")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "smoke":
		err = smoke()
	case "e2e":
		err = e2e(os.Args[2:])
	case "synth":
		err = synthModels(os.Args[2:])
	case "perf":
		err = perf(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gpucheck:", err)
		os.Exit(1)
	}
}

// smoke opens the GPU twice: the first start compiles the kernels (the
// JIT of the PTX, Metal's compile of the MSL), the second may find them in
// the driver's cache.
func smoke() error {
	for i, what := range []string{"first start (compile)", "second start (cache)"} {
		t0 := time.Now()
		d, err := openGPU()
		if err != nil {
			return err
		}
		took := time.Since(t0)
		if i == 0 {
			fmt.Printf("device:       %s\n", d.Name())
			describeGPU(d)
			fmt.Printf("free:         %.1f GiB for models after the backend's reserve\n", float64(d.FreeBytes())/(1<<30))
			if bw, err := d.CopyBandwidth(1 << 30); err == nil {
				fmt.Printf("copy:         %.0f GB/s device to device (read + write)\n", bw)
			} else {
				fmt.Printf("copy:         %v\n", err)
			}
		}
		fmt.Printf("%-13s %v\n", what+":", took.Round(time.Millisecond))
		d.Close()
	}
	return nil
}

func e2e(args []string) error {
	fs := flag.NewFlagSet("e2e", flag.ExitOnError)
	threads := fs.Int("t", min(runtime.NumCPU(), 16), "CPU threads")
	_ = fs.Parse(args)
	failed := 0
	for _, path := range fs.Args() {
		kv := engine.KVF16
		if strings.Contains(filepath.Base(path), "stories260K") {
			kv = engine.KVF32 // its references are F32-cache runs
		}
		fmt.Printf("%s:\n", filepath.Base(path))
		levels, err := gpucheck.Compare(context.Background(), path, gpucheck.Options{Device: backendName, Threads: *threads, KV: kv,
			OnLevel: func(l gpucheck.Level) { fmt.Printf("  %s\n", l.String()) }})
		if err != nil {
			fmt.Printf("  FAIL: %v\n", err)
			failed++
			continue
		}
		for _, l := range levels {
			if !l.OK() {
				failed++
			}
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d checks failed", failed)
	}
	fmt.Println("e2e: every level of every model agrees with the CPU")
	return nil
}

// llama3_8b is Llama 3 8B's shape (until `churon dev synth` has it as a
// preset): llama3.2-1b's spec widened.
func llama3_8b(ft synth.FileType) (synth.Spec, error) {
	s, err := synth.Preset("llama3.2-1b", ft, 1)
	if err != nil {
		return s, err
	}
	s.Embd, s.Layers, s.Heads, s.KVHeads, s.FF, s.Tied = 4096, 32, 32, 8, 14336, false
	return s, nil
}

// synthModels writes SHAPE:TYPE[:layers=N] models into a folder, in
// parallel.
func synthModels(args []string) error {
	fs := flag.NewFlagSet("synth", flag.ExitOnError)
	out := fs.String("o", "models", "folder to write the models in")
	_ = fs.Parse(args)
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	var wg sync.WaitGroup
	errs := make([]error, fs.NArg())
	for i, arg := range fs.Args() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = synthOne(*out, arg)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func synthOne(dir, arg string) error {
	parts := strings.Split(arg, ":")
	if len(parts) < 2 {
		return fmt.Errorf("%q: want SHAPE:TYPE[:layers=N]", arg)
	}
	ft, err := synth.ParseFileType(parts[1])
	if err != nil {
		return err
	}
	var s synth.Spec
	if parts[0] == "llama3-8b" {
		s, err = llama3_8b(ft)
	} else {
		s, err = synth.Preset(parts[0], ft, 1)
	}
	if err != nil {
		return err
	}
	full := s.Layers
	for _, p := range parts[2:] {
		if v, ok := strings.CutPrefix(p, "layers="); ok {
			if s.Layers, err = strconv.Atoi(v); err != nil || s.Layers <= 0 {
				return fmt.Errorf("%q: bad layer count", arg)
			}
		}
	}
	name := fmt.Sprintf("%s-%s-L%d-of-%d.gguf", parts[0], ft, s.Layers, full)
	t0 := time.Now()
	if err := synth.Write(filepath.Join(dir, name), s); err != nil {
		return err
	}
	fmt.Printf("wrote %s in %v\n", name, time.Since(t0).Round(time.Second))
	return nil
}

// perfResult is one model's speed.
type perfResult struct {
	Model          string  `json:"model"`
	Layers         int     `json:"layers"`
	FullLayers     int     `json:"full_layers"`
	Backend        string  `json:"backend"`
	GPUBytes       int64   `json:"gpu_weight_bytes"` // read per token: weights on the GPU
	PP             float64 `json:"pp_tokens_per_s"`
	TG             float64 `json:"tg_tokens_per_s"`
	LaunchesPerTok float64 `json:"launches_per_token"`
	CopyGBs        float64 `json:"copy_gb_per_s"`
	BandwidthShare float64 `json:"tg_bandwidth_share"`
	// TGFull estimates tg of the full-depth model from the per-layer
	// bytes at the same share of bandwidth.
	TGFull float64 `json:"tg_full_estimate"`
}

func perf(args []string) error {
	fs := flag.NewFlagSet("perf", flag.ExitOnError)
	jsonOut := fs.String("json", "", "write the results as JSON here too")
	pp := fs.Int("pp", 512, "prompt tokens")
	tg := fs.Int("tg", 128, "generated tokens")
	reps := fs.Int("reps", 3, "repetitions (the median counts)")
	threads := fs.Int("t", min(runtime.NumCPU(), 16), "CPU threads")
	_ = fs.Parse(args)
	var results []perfResult
	for _, path := range fs.Args() {
		r, err := perfOne(path, *pp, *tg, *reps, *threads)
		if err != nil {
			return fmt.Errorf("%s: %w", filepath.Base(path), err)
		}
		results = append(results, r)
		fmt.Printf("%-40s pp%d %8.0f tok/s   tg%d %7.1f tok/s   %4.0f launches/token   %5.1f%% of %0.f GB/s   (%d/%d layers; full depth ≈ %.0f tok/s)\n",
			r.Model, *pp, r.PP, *tg, r.TG, r.LaunchesPerTok, 100*r.BandwidthShare, r.CopyGBs, r.Layers, r.FullLayers, r.TGFull)
	}
	if *jsonOut != "" {
		b, _ := json.MarshalIndent(results, "", "  ")
		return os.WriteFile(*jsonOut, b, 0o644)
	}
	return nil
}

func median(v []float64) float64 {
	sort.Float64s(v)
	return v[len(v)/2]
}

func perfOne(path string, pp, tg, reps, threads int) (perfResult, error) {
	ctx := context.Background()
	d, err := openGPU()
	if err != nil {
		return perfResult{}, err
	}
	bw, err := d.CopyBandwidth(1 << 30)
	if err != nil {
		return perfResult{}, err
	}
	m, err := engine.Load(ctx, path, engine.LoadOptions{Accelerator: d, GPULayers: 1 << 20, Threads: threads, Context: pp + tg + 8, Batch: pp})
	if err != nil {
		return perfResult{}, err
	}
	defer m.Close()
	in := m.Info()
	r := perfResult{Model: filepath.Base(path), Layers: in.Layers, Backend: in.Backend, CopyGBs: bw}
	fmt.Sscanf(strings.TrimSuffix(r.Model, ".gguf")[strings.LastIndex(r.Model, "-of-")+4:], "%d", &r.FullLayers)
	if r.FullLayers == 0 {
		r.FullLayers = in.Layers
	}
	// Weights read per generated token: all but the embedding's.
	embd, head, err := tensorBytes(path)
	if err != nil {
		return r, err
	}
	r.GPUBytes = in.WeightBytes - embd
	if head == embd {
		r.GPUBytes += head // tied: the head reads the table
	}
	prompt := make([]int32, pp)
	for i := range prompt {
		prompt[i] = int32(1 + (i*7919)%(in.VocabSize-1))
	}
	var pps, tgs, launches []float64
	for rep := 0; rep <= reps; rep++ { // the first is a warm-up
		s, err := m.NewSequence(engine.SequenceOptions{Context: pp + tg + 8, Batch: pp})
		if err != nil {
			return r, err
		}
		t0 := time.Now()
		if err := s.Feed(ctx, prompt); err != nil {
			return r, err
		}
		tp := time.Since(t0)
		l0 := d.Launches()
		t1 := time.Now()
		for range tg {
			if err := s.Feed(ctx, []int32{7}); err != nil {
				return r, err
			}
		}
		tt := time.Since(t1)
		if rep > 0 {
			pps = append(pps, float64(pp)/tp.Seconds())
			tgs = append(tgs, float64(tg)/tt.Seconds())
			launches = append(launches, float64(d.Launches()-l0)/float64(tg))
		}
		s.Close()
	}
	r.PP, r.TG, r.LaunchesPerTok = median(pps), median(tgs), median(launches)
	r.BandwidthShare = float64(r.GPUBytes) * r.TG / (bw * 1e9)
	if r.FullLayers != in.Layers {
		perLayer := float64(r.GPUBytes-head) / float64(in.Layers)
		full := float64(head) + perLayer*float64(r.FullLayers)
		r.TGFull = r.BandwidthShare * bw * 1e9 / full
	} else {
		r.TGFull = r.TG
	}
	return r, nil
}

// tensorBytes reads what the model's token embedding (which stays on the
// CPU) and output head take; a tied head reads the embedding.
func tensorBytes(path string) (embd, head int64, err error) {
	f, err := gguf.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	if t, ok := f.Tensor("token_embd.weight"); ok {
		embd = int64(t.Size)
	}
	head = embd
	if t, ok := f.Tensor("output.weight"); ok {
		head = int64(t.Size)
	}
	return embd, head, nil
}
