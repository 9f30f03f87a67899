package cli

import (
	"os/exec"
	"testing"

	"github.com/churon/churon/internal/testdata"
)

// TestBenchFollowup runs `churon bench --followup --json` on stories260K
// with a short history: the restored run happens in a child process (this
// test binary), all three answers agree, the warm and restored runs
// process only the follow-up while the cold one processes everything.
// (Speed ratios depend on the machine and are not checked here.)
func TestBenchFollowup(t *testing.T) {
	skipChildProcessesInShort(t)
	model := testdata.Stories260K(t)
	saved := followupChild
	t.Cleanup(func() { followupChild = saved })
	followupChild = func(args []string) (*exec.Cmd, error) {
		return childCommand(append([]string{"bench"}, args...)), nil
	}
	var r followupJSON
	runJSON(t, &r, "bench", "--followup", "-m", model, "--history", "300", "-n", "8", "-t", "1", "--json")
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
