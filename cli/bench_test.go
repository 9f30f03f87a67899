package cli

import (
	"bufio"
	"bytes"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/churon/churon/internal/testdata"
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

// borders returns the rune positions of a table row's "|".
func borders(row string) []int {
	var at []int
	for i, r := range []rune(row) {
		if r == '|' {
			at = append(at, i)
		}
	}
	return at
}

// TestBenchTableBorders prints rows with the numbers a tiny model gives
// (thousands of tokens/s, a spread as large) and the longest test names;
// every row's borders line up with the header's.
func TestBenchTableBorders(t *testing.T) {
	cases := []benchJSON{
		{NPrompt: 16, NGen: 8, Threads: 2, PPTPS: 4662.8, PPStd: 1662.7, TGTPS: 2554.1, TGStd: 1830, WeightsGBps: 2.7},
		{NPrompt: 512, NGen: 128, Threads: 16, Depth: 4096, Batch: 16, PPTPS: 123456.7, PPStd: 12345.6, TGTPS: 99999.9, TGStd: 99999.9, WeightsGBps: 1234.5},
		{NGen: 1, Threads: 1, TGTPS: 0.4, TGStd: 0},
	}
	var buf bytes.Buffer
	benchRow(&buf, "test", "tokens/s", "weights GB/s")
	w := bufio.NewWriter(&buf)
	for _, r := range cases {
		if err := printBench(w, r, false); err != nil {
			t.Fatal(err)
		}
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	head := borders(lines[0])
	rows := 0
	for _, l := range lines[1:] {
		if !strings.HasPrefix(l, "|") {
			continue
		}
		rows++
		if !slices.Equal(borders(l), head) {
			t.Errorf("row %q has borders at %v; the header at %v", l, borders(l), head)
		}
	}
	if rows != 5 {
		t.Errorf("%d rows; want 5:\n%s", rows, buf.String())
	}
}

// TestHumanCount: small models are counted in K, as the bench header and
// info print them (stories260K was "0M parameters"; the counts'
// formatting is units.ParamsPrecise's test).
func TestHumanCount(t *testing.T) {
	model := testdata.Stories260K(t)
	out, _ := runOK(t, "bench", "-m", model, "-p", "4", "-n", "2", "-r", "1", "--no-bandwidth", "-t", "1")
	if strings.Contains(out, "0M parameters") || !strings.Contains(out, "K parameters") {
		t.Errorf("bench header does not count a tiny model in K:\n%s", out)
	}
}
