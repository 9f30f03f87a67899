package cli

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/churon/churon/internal/testdata"
	"github.com/churon/churon/models/synth"
)

// run runs one churon command in this process and returns its stdout,
// its stderr and its exit code.
func run(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Run(context.Background(), args, &out, &errOut)
	return out.String(), errOut.String(), code
}

// runOK runs a command that must succeed and returns its stdout and
// stderr.
func runOK(t *testing.T, args ...string) (string, string) {
	t.Helper()
	out, stderr, code := run(t, args...)
	if code != 0 {
		t.Fatalf("churon %s: exit %d: %s", strings.Join(args, " "), code, stderr)
	}
	return out, stderr
}

// runJSON runs a command that must succeed, decodes its stdout (one JSON
// value) into v and returns its stderr.
func runJSON(t *testing.T, v any, args ...string) string {
	t.Helper()
	out, stderr := runOK(t, args...)
	decodeJSON(t, "churon "+strings.Join(args, " "), []byte(out), v)
	return stderr
}

// decodeJSON decodes one JSON value, from what, into v.
func decodeJSON(t *testing.T, what string, data []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v: %q", what, err, data)
	}
}

// readFile returns the bytes of a file the test cannot go on without.
func readFile(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// wantUsageErrors runs command lines that are wrong: each must exit 2
// and say why on stderr.
func wantUsageErrors(t *testing.T, cmds [][]string) {
	t.Helper()
	for _, args := range cmds {
		if _, stderr, code := run(t, args...); code != 2 || stderr == "" {
			t.Errorf("churon %s: exit %d, stderr %q; want a usage error", strings.Join(args, " "), code, stderr)
		}
	}
}

// writeSynth writes a synthetic model to path (making its folder) and
// returns the path.
func writeSynth(t *testing.T, path string, s synth.Spec) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := synth.Write(path, s); err != nil {
		t.Fatal(err)
	}
	return path
}

// synthFile writes the tiny synthetic model of an architecture to a
// temporary folder.
func synthFile(t *testing.T, arch string) string {
	t.Helper()
	return writeSynth(t, filepath.Join(t.TempDir(), arch+".gguf"), synth.Tiny(arch))
}

// greedyReference is llama.cpp's greedy run of stories260K on one prompt
// (reference/stories260K_greedy_NAME.json in the shared test data).
type greedyReference struct {
	Prompt    string  `json:"prompt"`
	PromptIDs []int32 `json:"prompt_ids"`
	Generated []int32 `json:"generated_ids"`
}

func readGreedyReference(t *testing.T, name string) greedyReference {
	t.Helper()
	path := testdata.Path(t, "reference", "stories260K_greedy_"+name+".json")
	var ref greedyReference
	decodeJSON(t, path, readFile(t, path), &ref)
	return ref
}

// cliChildEnv makes the test binary run one churon command (see TestMain
// in models_test.go).
const cliChildEnv = "CHURON_CLI_CHILD_ARGS"

// childCommand runs `churon ARGS` in a fresh process, this test binary,
// with env added to its environment.
func childCommand(args []string, env ...string) *exec.Cmd {
	spec, _ := json.Marshal(args)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), cliChildEnv+"="+string(spec)), env...)
	return cmd
}

// skipChildProcessesInShort keeps -short runs to this process.
func skipChildProcessesInShort(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts child processes")
	}
}

// readZip opens a zip archive held in memory.
func readZip(t *testing.T, data []byte) *zip.Reader {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	return zr
}

// zipNames lists the files of a zip archive in name order.
func zipNames(t *testing.T, data []byte) []string {
	t.Helper()
	zr := readZip(t, data)
	names := make([]string, 0, len(zr.File))
	for _, f := range zr.File {
		names = append(names, f.Name)
	}
	slices.Sort(names)
	return names
}
