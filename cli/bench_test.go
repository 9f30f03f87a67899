package cli

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

// TestDevSynth: the generator writes a loadable model of a real shape's
// width, the same bytes for the same flags, and rejects bad flags.
func TestDevSynth(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.gguf"), filepath.Join(dir, "b.gguf")
	for _, path := range []string{a, b} {
		out, _ := runOK(t, "dev", "synth", "--shape", "qwen2.5-0.5b", "--type", "Q4_K_M", "--seed", "3",
			"--layers", "1", "--vocab", "300", "-o", path)
		if !strings.Contains(out, "Q5_0") {
			t.Errorf("summary does not show the fallback type: %s", out)
		}
	}
	x, y := readFile(t, a), readFile(t, b)
	if len(x) == 0 || !bytes.Equal(x, y) {
		t.Fatalf("same flags gave different files (%d and %d bytes)", len(x), len(y))
	}
	out, stderr, code := run(t, "info", "-m", a, "--json")
	if code != 0 || !strings.Contains(out, `"Q4_K_M"`) {
		t.Errorf("info on the generated model: exit %d, %s %s", code, out, stderr)
	}
	wantUsageErrors(t, [][]string{
		{"dev", "synth", "--shape", "gpt-5", "--type", "Q4_0", "-o", a},
		{"dev", "synth", "--shape", "qwen2.5-0.5b", "--type", "Q9_9", "-o", a},
		{"dev", "synth", "--shape", "qwen2.5-0.5b"},
		{"dev", "nothing"},
	})
}

// TestBenchJSON runs a small benchmark and checks the documented fields.
func TestBenchJSON(t *testing.T) {
	model := synthFile(t, "llama")
	out, _ := runOK(t, "bench", "-m", model, "-p", "16", "-n", "4", "-r", "2", "-t", "1,2",
		"--batch", "1,3", "--depth", "8", "--no-bandwidth", "--json")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 4 {
		t.Fatalf("%d JSON lines for 2 thread counts × 2 batch sizes:\n%s", len(lines), out)
	}
	for _, l := range lines {
		var r map[string]any
		decodeJSON(t, "bench --json", []byte(l), &r)
		for _, k := range []string{"pp_tps", "tg_tps", "pp_std", "tg_std", "threads", "weights_bytes", "weights_gbps", "depth", "batch", "model", "type"} {
			if _, ok := r[k]; !ok {
				t.Errorf("field %q missing: %s", k, l)
			}
		}
		if r["pp_tps"].(float64) <= 0 || r["tg_tps"].(float64) <= 0 || r["weights_bytes"].(float64) <= 0 || r["depth"].(float64) != 8 {
			t.Errorf("implausible result: %s", l)
		}
	}
	// The human table says how close decoding comes to the bandwidth.
	out, stderr, code := run(t, "bench", "-m", model, "-p", "0", "-n", "2", "-r", "1", "--size", "16")
	if code != 0 || !strings.Contains(out, "% of measured bandwidth") {
		t.Errorf("exit %d: %s %s", code, out, stderr)
	}
}

func TestBenchBandwidth(t *testing.T) {
	var r bandwidthJSON
	runJSON(t, &r, "bench", "--bandwidth", "--size", "16", "-r", "1", "-t", "2", "--json")
	if r.ReadGBps <= 0 || r.ReadGBps1 <= 0 || len(r.Results) != 2 || r.Threads != 2 {
		t.Errorf("result %+v", r)
	}
	wantUsageErrors(t, [][]string{{"bench"}}) // without a model
}
