// Command archref records llama.cpp's logits for the synthetic models of
// the architectures Churon adds: each case's model is generated with
// models/synth (the same bytes on every machine), run through llama.cpp
// v0.5.0 by tools/llamacpp-bench/logits.mjs at every position of a fixed
// prompt, and the logits are written beside a manifest that the engine's
// TestArchReferences reads. The tests regenerate the models themselves,
// so only the references are committed.
//
//	go run ./tools/archref [-out engine/testdata/archref] [-only qwen3moe]
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
	SHA256 string  `json:"sha256"` // of the generated model
}

// prompt is long enough to cross several experts' batches, and stays
// inside the smallest vocabulary (320).
var prompt = []int32{1, 300, 17, 299, 5, 260, 261, 42, 100, 7, 3, 250, 128, 64, 311, 9, 77, 200, 150, 33}

func cases() []Case {
	var out []Case
	add := func(shape string, types ...string) {
		for _, t := range types {
			out = append(out, Case{Name: shape + "-" + strings.ToLower(t), Shape: shape, Type: t, Seed: 1, IDs: prompt, KV: "f32"})
		}
	}
	add("qwen3moe-test", "F16", "Q8_0", "Q4_K_M", "Q4_0")
	add("qwen3moe-odd", "F16", "Q8_0", "Q4_K_M", "Q4_0")
	add("llama-moe-test", "F16", "Q4_K_M")
	add("llama-extras-test", "F16", "Q8_0")
	// gpt-oss: windows of 16 and 5 positions, shorter than the prompt.
	add("gpt-oss-test", "F16", "Q8_0", "MXFP4_MOE")
	add("gpt-oss-odd", "F16", "Q8_0", "MXFP4_MOE")
	return out
}

func main() {
	out := flag.String("out", "engine/testdata/archref", "directory for the references and manifest.json")
	bench := flag.String("bench", "tools/llamacpp-bench", "directory of logits.mjs")
	only := flag.String("only", "", "record only the cases whose name contains this")
	flag.Parse()
	if err := run(*out, *bench, *only); err != nil {
		fmt.Fprintln(os.Stderr, "archref:", err)
		os.Exit(1)
	}
}

func run(out, bench, only string) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "archref")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	all := cases()
	for i, c := range all {
		if !strings.Contains(c.Name, only) {
			continue
		}
		ft, err := synth.ParseFileType(c.Type)
		if err != nil {
			return err
		}
		s, err := synth.Preset(c.Shape, ft, c.Seed)
		if err != nil {
			return err
		}
		model := filepath.Join(tmp, c.Name+".gguf")
		if err := synth.Write(model, s); err != nil {
			return err
		}
		if all[i].SHA256, err = sha256File(model); err != nil {
			return err
		}
		ids := make([]string, len(c.IDs))
		for j, id := range c.IDs {
			ids[j] = fmt.Sprint(id)
		}
		ref := filepath.Join(out, c.Name+".json")
		cmd := exec.Command("node", filepath.Join(bench, "logits.mjs"), "-m", model, "--ids", strings.Join(ids, ","),
			"--kv", c.KV, "-t", "1", "--top", "5", "--out", ref)
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("%s: llama.cpp: %w", c.Name, err)
		}
		fmt.Printf("%s: %s\n", c.Name, ref)
		os.Remove(model)
	}
	if only != "" {
		return nil // the manifest lists every case: write it from a full run
	}
	data, err := json.MarshalIndent(all, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(out, "manifest.json"), append(data, '\n'), 0o644)
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
