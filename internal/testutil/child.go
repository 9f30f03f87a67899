package testutil

import (
	"io"
	"os"
	"os/exec"
	"testing"
	"time"
)

// StartChild starts the test binary again as a child process, for tests
// that kill a process in the middle of its work and check what it left.
//
// The child runs the tests matching run ("^$" runs none: for a child that
// TestMain takes over) with env added to its environment; a test that
// sees its child variable set plays the child's part. Its stderr is the
// test's, its stdout is returned: read it, or the child blocks once it
// has written more than a pipe holds. The child is killed after limit (0:
// no limit), so that a parent waiting on its output cannot hang, and at
// the end of the test if it is still running.
func StartChild(t testing.TB, limit time.Duration, run string, env ...string) (*exec.Cmd, io.Reader) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run="+run, "-test.count=1")
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start the child process: %v", err)
	}
	if limit > 0 {
		killer := time.AfterFunc(limit, func() { cmd.Process.Kill() })
		t.Cleanup(func() { killer.Stop() })
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil { // not waited for by the test
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	return cmd, out
}
