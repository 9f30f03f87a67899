package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/churon/churon/internal/testdata"
)

// TestQuantize runs the command on the quantzoo's F32 model: the --pure
// Q8_0 file is llama.cpp's byte for byte, the Q4_K_M one generates, a
// quantized source needs --allow-requantize, and bad usage exits 2.
func TestQuantize(t *testing.T) {
	src := testdata.Path(t, "quantzoo", "zoo-F32.gguf")
	dir := t.TempDir()

	q8 := filepath.Join(dir, "q8.gguf")
	var rep quantizeJSON
	runJSON(t, &rep, "quantize", src, q8, "q8_0", "--pure", "-t", "2", "--json")
	if rep.Type != "Q8_0" || rep.FileType != 7 || rep.Tensors != 21 || rep.Converted != 16 || rep.Copied != 5 ||
		rep.TypeCounts["Q8_0"] != 16 || rep.Threads != 2 || rep.BitsPerWeight < 8.4 || rep.BitsPerWeight > 8.6 || rep.Warnings == nil {
		t.Errorf("report: %+v", rep)
	}
	got, want := readFile(t, q8), readFile(t, testdata.Path(t, "quantzoo", "zoo-Q8_0.gguf"))
	if len(got) == 0 || !bytes.Equal(got, want) || rep.OutBytes != int64(len(want)) {
		t.Errorf("Q8_0 file (%d bytes) is not llama.cpp's (%d bytes)", len(got), len(want))
	}

	q4 := filepath.Join(dir, "q4km.gguf")
	out, stderr, code := run(t, "quantize", src, q4, "Q4_K_M")
	if code != 0 || !strings.Contains(out, "Q4_K_M") || !strings.Contains(out, "Q6_K 3") {
		t.Fatalf("exit %d: %s %s", code, out, stderr)
	}
	if !strings.Contains(stderr, "100%") {
		t.Errorf("no progress on stderr: %q", stderr)
	}
	if out, stderr, code := run(t, "generate", "-m", q4, "-p", "Once upon a time", "-n", "4", "--temp", "0", "--raw"); code != 0 || out == "" {
		t.Errorf("generate with the quantized model: exit %d, %q %s", code, out, stderr)
	}

	requant := filepath.Join(dir, "requant.gguf")
	_, stderr, code = run(t, "quantize", q8, requant, "Q4_0")
	if code != 1 || !strings.Contains(stderr, "--allow-requantize") {
		t.Errorf("requantizing without the flag: exit %d, %s", code, stderr)
	}
	if _, err := os.Stat(requant); !os.IsNotExist(err) {
		t.Errorf("refused run left %s", requant)
	}
	_, stderr, code = run(t, "quantize", q8, requant, "Q4_0", "--allow-requantize")
	if code != 0 || !strings.Contains(stderr, "warning: requantizing") {
		t.Errorf("requantizing with the flag: exit %d, %s", code, stderr)
	}

	wantUsageErrors(t, [][]string{
		{"quantize", src, q4},
		{"quantize", src, q4, "Q9_9"},
		{"quantize", src, q4, "Q4_0", "-t", "-1"},
		{"quantize", src, q4, "Q4_0", "extra"},
	})
}
