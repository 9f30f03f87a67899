package download

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/churon/churon/internal/testutil"
)

// TestMain lets the test binary act as a downloading child process that
// the restart test kills.
func TestMain(m *testing.M) {
	if url := os.Getenv("CHURON_DL_CHILD_URL"); url != "" {
		opt := heldOpts() // the parent holds the server midway, until the kill
		d := Start(context.Background(), Request{URL: url, Dest: os.Getenv("CHURON_DL_CHILD_DEST"), SHA256: os.Getenv("CHURON_DL_CHILD_SHA")}, opt)
		if err := d.Err(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestResumeAfterProcessKilled kills a downloading process with SIGKILL
// and checks that a new one finishes from where the state file says,
// with the right bytes.
func TestResumeAfterProcessKilled(t *testing.T) {
	fs, srv := newFileServer(t, 3<<20)
	fs.holdAfter(int64(len(fs.data)) * 3 / 5) // the child cannot finish before the kill
	dest := filepath.Join(t.TempDir(), "model.gguf")
	// TestMain plays the child; it writes nothing to the unread stdout.
	cmd, _ := testutil.StartChild(t, 0, "^$",
		"CHURON_DL_CHILD_URL="+srv.URL+"/model.gguf", "CHURON_DL_CHILD_DEST="+dest, "CHURON_DL_CHILD_SHA="+sum(fs.data))
	saved := func() int64 {
		data, err := os.ReadFile(statePath(dest))
		if err != nil {
			return 0
		}
		var s state
		if json.Unmarshal(data, &s) != nil {
			return 0
		}
		return s.written()
	}
	waitFor(t, "the child to save 40% of the file", func() bool { return saved() > int64(len(fs.data))*2/5 })
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	noFile(t, dest)
	kept := saved()
	before := fs.served.Load()

	fs.release()
	d := Start(context.Background(), Request{URL: srv.URL + "/model.gguf", Dest: dest, SHA256: sum(fs.data)}, fastOpts())
	if err := waitDone(t, d); err != nil {
		t.Fatal(err)
	}
	checkFile(t, dest, fs.data)
	if got, want := d.BytesFetched(), int64(len(fs.data))-kept; got != want {
		t.Errorf("the new process fetched %d bytes; the state said %d were on disk, so want %d", got, kept, want)
	}
	t.Logf("killed after %d of %d bytes saved; the restart fetched %d (server sent %d after the kill)",
		kept, len(fs.data), d.BytesFetched(), fs.served.Load()-before)
}
