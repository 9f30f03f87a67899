package cli

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/churon/churon/internal/testdata"
)

// TestBenchFollowup runs `churon bench --followup --json` on stories260K
// with a short history: the restored run happens in a child process (this
// test binary), all three answers agree, the warm and restored runs
// process only the follow-up while the cold one processes everything.
// (Speed ratios depend on the machine and are not checked here.)
func TestBenchFollowup(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	model := filepath.Join(testdata.Dir(t), "models", "stories260K.gguf")
	saved := followupChild
	t.Cleanup(func() { followupChild = saved })
	followupChild = func(args []string) (*exec.Cmd, error) {
		spec, _ := json.Marshal(append([]string{"bench"}, args...))
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), cliChildEnv+"="+string(spec))
		return cmd, nil
	}
	var out, errOut strings.Builder
	if code := Run(context.Background(), []string{"bench", "--followup", "-m", model, "--history", "300", "-n", "8", "-t", "1", "--json"}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	var r followupJSON
	if err := json.Unmarshal([]byte(out.String()), &r); err != nil {
		t.Fatalf("%v: %q", err, out.String())
	}
	if !r.AnswersMatch || r.HistoryTokens < 300 || r.GenTokens != 8 || r.SnapshotBytes <= 0 || r.KVType != "f16" {
		t.Fatalf("%+v", r)
	}
	if r.ColdProcessed != r.PromptTokens || r.WarmProcessed <= 0 || r.WarmProcessed*3 > r.PromptTokens || r.RestoreProcess != r.WarmProcessed {
		t.Fatalf("processed: cold %d, warm %d, restored %d of %d", r.ColdProcessed, r.WarmProcessed, r.RestoreProcess, r.PromptTokens)
	}
	if r.ColdTTFTMs <= 0 || r.WarmTTFTMs <= 0 || r.RestoredTTFTMs < r.RestoreMs || r.RestoreMs <= 0 || r.WarmSpeedup <= 0 || r.RestoredSpeedup <= 0 {
		t.Fatalf("timings %+v", r)
	}
}
