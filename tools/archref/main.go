// Command archref is the one way Churon checks an architecture against
// llama.cpp: it records llama.cpp v0.5.0's logits for synthetic models
// (models/synth presets, the same bytes on every machine) at every
// position of a fixed prompt, through tools/llamacpp-bench/logits.mjs, and
// writes them beside a manifest that the engine's TestArchReferences
// reads and compares. The test regenerates the models itself, so only
// the references are committed.
//
//	go run ./tools/archref [-out engine/testdata/archref] [-only gemma3]
//	go run ./tools/archref -live -keep -out /tmp/live
//
// A live case is too large to commit (Gemma 3 1B's full vocabulary at
// every position): a plain run lists it in the manifest without recording
// it, -live records only the live cases and -keep leaves each model beside
// its logits, which is what TestArchReferences does under
// CHURON_LLAMACPP_LIVE=1.
//
// It needs node ≥ 20 and node-llama-cpp installed as
// tools/llamacpp-bench/README.md says.
package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/churon/churon/models/synth"
)

// Case is one model and prompt; the manifest lists them.
type Case struct {
	Name   string  `json:"name"`   // also the reference's file name, .json
	Shape  string  `json:"shape"`  // synth preset
	Type   string  `json:"type"`   // file type, with llama-quantize's rules
	Seed   uint64  `json:"seed"`   // synth seed
	IDs    []int32 `json:"ids"`    // the prompt
	KV     string  `json:"kv"`     // llama.cpp's KV cache type
	SHA256 string  `json:"sha256"` // of the generated model; empty for a live case
	// ExpertFlips is how many rows may fall below the cosine bar to 0.99
	// because a quantized model routes one token to another expert than
	// llama.cpp does (two experts' probabilities within rounding); only
	// the cases that showed one have it.
	ExpertFlips int `json:"expert_flips,omitempty"`
	// MinCosine, when set, replaces the file type's cosine bar for a case
	// whose logits move further than it with the order of the sums alone:
	// the bar is then llama.cpp's own spread across its CPU variants.
	MinCosine float64 `json:"min_cosine,omitempty"`
	// Live cases are recorded and compared only on demand (-live).
	Live bool `json:"live,omitempty"`
	// Layers, Window and SWAPattern, when set, cut the preset (a live
	// case's real width on fewer layers); the test only runs cut models
	// that the tool wrote.
	Layers     int `json:"layers,omitempty"`
	Window     int `json:"window,omitempty"`
	SWAPattern int `json:"swa_pattern,omitempty"`
	// Greedy > 0 has llama.cpp decode that many tokens greedily after the
	// prompt, which the test's greedy decode must equal up to the first
	// near tie.
	Greedy int `json:"greedy,omitempty"`
}

// gemma3TinyQ8Spread is gemma3-tiny-q8_0-kvf16's bar: llama.cpp v0.5.0
// disagrees with itself there. Its logits (node-llama-cpp 3.22.1, each
// prebuilt CPU variant alone, 2026-12-03) are bit-identical across the
// zen4, icelake, skylakex and haswell variants, 1 and 2 threads and
// batches of 1, 4, 7, 16 and 24, but its scalar x64 variant — the same
// arithmetic summed one block after another instead of in 8 lanes —
// reaches only cosine 0.9997115 (row 9) against them. Churon matches
// both: its generic code (and prompt tiles) equals the x64 variant to
// 1e-14 on rows 1–23 (1.5e-5 on row 0), its avx512 lanes equal zen4's
// to 1e-14 on rows 0–21. A bar above 0.9997 would pick a summing order,
// not check the architecture.
const gemma3TinyQ8Spread = 0.9997

// prompt is long enough to cross several experts' batches and
// gpt-oss's windows, and stays inside the smallest vocabulary (320).
var prompt = []int32{1, 300, 17, 299, 5, 260, 261, 42, 100, 7, 3, 250, 128, 64, 311, 9, 77, 200, 150, 33}

// spreadPrompt is BOS and n-1 pseudo-random ids in [3, vocab): gemma3's
// prompts, longer than its test shapes' windows so that local layers
// drop keys the global ones keep.
func spreadPrompt(vocab, n int) []int32 {
	ids := []int32{1}
	x := uint32(12345)
	for len(ids) < n {
		x = x*1664525 + 1013904223
		ids = append(ids, int32(3+int(x>>8)%(vocab-3)))
	}
	return ids
}

func cases() ([]Case, error) {
	var out []Case
	add := func(c Case, types ...string) {
		for _, t := range types {
			c.Type, c.Name = t, c.Shape
			if c.Layers > 0 {
				c.Name += fmt.Sprintf("-cut%d", c.Layers)
			}
			c.Name += "-" + strings.ToLower(t)
			if c.KV != "f32" {
				c.Name += "-kv" + c.KV
			}
			out = append(out, c)
		}
	}
	moe := func(shape string) Case { return Case{Shape: shape, Seed: 1, IDs: prompt, KV: "f32"} }
	add(moe("qwen3moe-test"), "F16", "Q8_0", "Q4_K_M", "Q4_0")
	add(moe("qwen3moe-odd"), "F16", "Q8_0", "Q4_K_M", "Q4_0")
	add(moe("llama-moe-test"), "F16", "Q4_K_M")
	add(moe("llama-extras-test"), "F16", "Q8_0")
	// gpt-oss: windows of 16 and 5 positions, shorter than the prompt.
	add(moe("gpt-oss-test"), "F16", "Q8_0", "MXFP4_MOE")
	add(moe("gpt-oss-odd"), "F16", "Q8_0", "MXFP4_MOE")
	// gpt-oss whose banded layers have a RoPE base of their own (window 6).
	add(moe("gpt-oss-ropeswa"), "F16", "Q8_0", "MXFP4_MOE")

	// Qwen 3.5, dense and with experts, in two shapes each (the odd ones
	// with 3 heads, 3 DeltaNet value heads on one key head, a convolution
	// of 3 taps and attention every third layer; qwen35-odd with an MTP
	// layer loaded and not run), 64 greedy tokens after the prompt. The
	// seeds are ones whose Q8_0 and 4-bit models show no rounding flip:
	// at seed 1, qwen35-test Q8_0 agrees to 1e-7 up to row 12 and then
	// drops to 0.99972 for good — one 8-bit activation rounding the other
	// way in a recurrent layer, which carries it on (about half the seeds
	// show one in some type; qwen35moe-test Q4_K_M at seed 2 routes a
	// token to another expert, cosine 0.9907, so that shape's 4-bit case
	// is Q4_0).
	q35 := func(shape string, seed uint64, kv string) Case {
		return Case{Shape: shape, Seed: seed, IDs: prompt, KV: kv, Greedy: 64}
	}
	add(q35("qwen35-test", 5, "f32"), "F16", "Q8_0", "Q4_0", "Q4_K_M")
	add(q35("qwen35-test", 5, "f16"), "F16")
	add(q35("qwen35-odd", 4, "f32"), "F16", "Q8_0", "Q4_0")
	add(q35("qwen35moe-test", 3, "f32"), "F16", "Q8_0", "Q4_0")
	add(q35("qwen35moe-odd", 1, "f32"), "F16", "Q8_0", "Q4_K_M")

	gemma := func(shape, kv string, n int) (Case, error) {
		s, err := synth.Preset(shape, "F16", 7)
		if err != nil {
			return Case{}, err
		}
		return Case{Shape: shape, Seed: 7, IDs: spreadPrompt(s.Vocab, n), KV: kv}, nil
	}
	for _, g := range []struct {
		shape, kv string
		types     []string
	}{
		// Q8_0 is ill-conditioned: the order of its sums alone moves a
		// row's cosine by 3e-4 (see gemma3TinyQ8Spread).
		{"gemma3-tiny", "f16", []string{"F16", "Q8_0", "Q4_K_M"}},
		{"gemma3-odd", "f16", []string{"F16", "Q4_0"}},
		{"gemma3-odd", "f32", []string{"F16", "Q8_0"}},
	} {
		c, err := gemma(g.shape, g.kv, 24)
		if err != nil {
			return nil, err
		}
		add(c, g.types...)
	}
	// Gemma 3 1B's real width — heads of 256, one KV head, 262,144 tokens —
	// on three layers, a window of 16 and a global layer every third: 40
	// rows of the full vocabulary are 100 MB of JSON, so it is live.
	live, err := gemma("gemma3-1b", "f16", 40)
	if err != nil {
		return nil, err
	}
	live.Seed, live.Live, live.Layers, live.Window, live.SWAPattern = 5, true, 3, 16, 3
	add(live, "F16")
	for i := range out {
		// Row 17 routes one token, in layer 0, to another expert than
		// llama.cpp: two experts' probabilities are within 1e-5 and one
		// step of 8-bit activation rounding decides (cosine 0.9932).
		if out[i].Name == "qwen3moe-test-q4_0" {
			out[i].ExpertFlips = 1
		}
		if out[i].Name == "gemma3-tiny-q8_0-kvf16" {
			out[i].MinCosine = gemma3TinyQ8Spread
		}
	}
	return out, nil
}

// spec is the case's synth model.
func (c Case) spec() (synth.Spec, error) {
	ft, err := synth.ParseFileType(c.Type)
	if err != nil {
		return synth.Spec{}, err
	}
	s, err := synth.Preset(c.Shape, ft, c.Seed)
	if err != nil {
		return synth.Spec{}, err
	}
	if c.Layers > 0 {
		s.Layers = c.Layers
	}
	if c.Window > 0 {
		s.SlidingWindow = c.Window
	}
	if c.SWAPattern > 0 {
		s.SWAPattern = c.SWAPattern
	}
	return s, nil
}

func main() {
	out := flag.String("out", "engine/testdata/archref", "directory for the references and manifest.json")
	bench := flag.String("bench", "tools/llamacpp-bench", "directory of logits.mjs")
	only := flag.String("only", "", "record only the cases whose name contains this")
	live := flag.Bool("live", false, "record the live cases (and only them) instead of the committed ones")
	keep := flag.Bool("keep", false, "keep each model beside its reference")
	manifest := flag.Bool("manifest", false, "write manifest.json from the cases and their models only, recording nothing (after -only runs)")
	flag.Parse()
	if *manifest {
		*only, *live, *keep = "", false, false
	}
	if err := run(*out, *bench, *only, *live, *keep, !*manifest); err != nil {
		fmt.Fprintln(os.Stderr, "archref:", err)
		os.Exit(1)
	}
}

// run generates each case's model (all the committed ones, or the live
// ones, whose name contains only), records llama.cpp's reference for it
// unless record is false, and writes manifest.json after a full run; with
// record false it writes manifest.json from the cases and their models
// only (after -only runs).
func run(out, bench, only string, live, keep, record bool) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "archref")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	all, err := cases()
	if err != nil {
		return err
	}
	for i, c := range all {
		if c.Live != live || !strings.Contains(c.Name, only) {
			continue
		}
		dir := tmp
		if keep {
			dir = out
		}
		model := filepath.Join(dir, c.Name+".gguf")
		s, err := c.spec()
		if err != nil {
			return fmt.Errorf("%s: %w", c.Name, err)
		}
		if err := synth.Write(model, s); err != nil {
			return fmt.Errorf("%s: %w", c.Name, err)
		}
		if all[i].SHA256, err = sha256File(model); err != nil {
			return err
		}
		if record {
			if err := recordCase(c, model, bench, out); err != nil {
				return err
			}
		}
		if !keep {
			os.Remove(model)
		}
	}
	if only != "" || live {
		return nil // the manifest lists every case: write it from a full run
	}
	data, err := json.MarshalIndent(all, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(out, "manifest.json"), append(data, '\n'), 0o644)
}

// recordCase has llama.cpp write case c's reference for model into out.
func recordCase(c Case, model, bench, out string) error {
	ids := make([]string, len(c.IDs))
	for j, id := range c.IDs {
		ids[j] = fmt.Sprint(id)
	}
	ref := filepath.Join(out, c.Name+".json")
	cmd := exec.Command("node", filepath.Join(bench, "logits.mjs"), "-m", model, "--ids", strings.Join(ids, ","),
		"--kv", c.KV, "-t", "1", "--top", "5", "--greedy", fmt.Sprint(c.Greedy), "--out", ref)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s: llama.cpp: %w", c.Name, err)
	}
	if err := shorten(ref); err != nil {
		return fmt.Errorf("%s: %w", c.Name, err)
	}
	fmt.Printf("%s: %s\n", c.Name, ref)
	return nil
}

func sha256File(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// shorten rewrites a reference's logits as the float32 values they are:
// JavaScript prints each as the float64 it widened to (17 digits where 9
// say the same), which would double the committed files.
func shorten(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(data, &doc); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	var rows [][]float32
	if err := json.Unmarshal(doc["full_logits_prompt"], &rows); err != nil {
		return fmt.Errorf("%s: logits: %w", path, err)
	}
	if doc["full_logits_prompt"], err = json.Marshal(rows); err != nil {
		return err
	}
	if data, err = json.Marshal(doc); err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}
