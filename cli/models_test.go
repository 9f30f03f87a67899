package cli

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/churon/churon/app/models"
)

// TestMain lets the test binary run one churon command as a child process
// (for the kill-and-resume test).
func TestMain(m *testing.M) {
	if a := os.Getenv(cliChildEnv); a != "" {
		var args []string
		if err := json.Unmarshal([]byte(a), &args); err != nil {
			os.Exit(3)
		}
		os.Exit(Run(context.Background(), args, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// slowFile serves a byte slice with Range support, pacing reads, and
// counts the body bytes it writes.
type slowFile struct {
	data []byte
	pace atomic.Int64 // nanoseconds per 32 KiB
	sent atomic.Int64
}

type pacedReader struct {
	*bytes.Reader
	s *slowFile
}

func (p pacedReader) Read(b []byte) (int, error) {
	if len(b) > 32<<10 {
		b = b[:32<<10]
	}
	time.Sleep(time.Duration(p.s.pace.Load()))
	return p.Reader.Read(b)
}

type countingRW struct {
	http.ResponseWriter
	n *atomic.Int64
}

func (c countingRW) Write(p []byte) (int, error) {
	n, err := c.ResponseWriter.Write(p)
	c.n.Add(int64(n))
	return n, err
}

func (s *slowFile) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	http.ServeContent(countingRW{w, &s.sent}, r, "", time.Time{}, pacedReader{bytes.NewReader(s.data), s})
}

func hexSum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// TestPullURLResumesAfterSIGKILL is the acceptance check: a pull
// killed with SIGKILL mid-download and run again finishes from where it
// stopped, with the right SHA-256.
func TestPullURLResumesAfterSIGKILL(t *testing.T) {
	sf := &slowFile{data: make([]byte, 8<<20)}
	for i := range sf.data {
		sf.data[i] = byte(i*7 + i>>11)
	}
	sf.pace.Store(int64(10 * time.Millisecond))
	srv := httptest.NewServer(sf)
	defer srv.Close()
	dir := t.TempDir()
	sum := hexSum(sf.data)
	args := []string{"pull", "--url", srv.URL + "/model.gguf", "--sha256", sum, "-o", dir, "--connections", "1"}
	cmd := childCommand(args)
	var childErr bytes.Buffer
	cmd.Stderr = &childErr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	statePath := filepath.Join(dir, "model.gguf.part.json")
	saved := func() int64 {
		var st struct {
			Chunks []struct{ Written int64 } `json:"chunks"`
		}
		data, err := os.ReadFile(statePath)
		if err != nil || json.Unmarshal(data, &st) != nil {
			return 0
		}
		var n int64
		for _, c := range st.Chunks {
			n += c.Written
		}
		return n
	}
	deadline := time.Now().Add(30 * time.Second)
	for saved() < int64(len(sf.data))/4 {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("the child saved no progress: %s", childErr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if _, err := os.Stat(filepath.Join(dir, "model.gguf")); err == nil {
		t.Fatal("a file exists under the final name after the kill")
	}
	kept := saved()
	sf.pace.Store(0)
	before := sf.sent.Load()
	out, stderr, code := run(t, args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	again := sf.sent.Load() - before
	got, err := os.ReadFile(filepath.Join(dir, "model.gguf"))
	if err != nil || hexSum(got) != sum {
		t.Fatalf("file %d bytes, err %v; SHA-256 wrong or missing", len(got), err)
	}
	if strings.TrimSpace(out) != filepath.Join(dir, "model.gguf") {
		t.Errorf("stdout %q", out)
	}
	if again > int64(len(sf.data))-kept+(1<<20) || again >= int64(len(sf.data))*4/5 {
		t.Errorf("the second run fetched %d bytes of %d; %d were on disk", again, len(sf.data), kept)
	}
	if !strings.Contains(stderr, "resumed") {
		t.Errorf("stderr does not say it resumed: %s", stderr)
	}
	t.Logf("killed with %d of %d bytes saved; the second run fetched %d", kept, len(sf.data), again)
}

func TestPullURLWrongHash(t *testing.T) {
	sf := &slowFile{data: []byte("not what you asked for")}
	srv := httptest.NewServer(sf)
	defer srv.Close()
	dir := t.TempDir()
	_, stderr, code := run(t, "pull", "--url", srv.URL+"/m.gguf", "--sha256", strings.Repeat("0", 64), "-o", dir)
	if code != 1 || !strings.Contains(stderr, "SHA-256 mismatch") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "m.gguf") {
			t.Errorf("%s left behind", e.Name())
		}
	}
}

// TestPullRepoModelsRm pulls a split model from a fake hub by quant, lists
// it and deletes it.
func TestPullRepoModelsRm(t *testing.T) {
	data := readFile(t, synthFile(t, "llama"))
	second := bytes.Repeat([]byte{9}, 5000) // a second part, served as is
	files := map[string]*slowFile{
		"tiny-Q8_0-00001-of-00002.gguf": {data: data},
		"tiny-Q8_0-00002-of-00002.gguf": {data: second},
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/models/{o}/{n}/tree/{rev}", func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("o")+"/"+r.PathValue("n") != "test/tiny-GGUF" {
			http.NotFound(w, r)
			return
		}
		var entries []string
		for name, f := range files {
			entries = append(entries, fmt.Sprintf(`{"type":"file","oid":"x","size":130,"path":%q,"lfs":{"oid":%q,"size":%d,"pointerSize":130}}`, name, hexSum(f.data), len(f.data)))
		}
		entries = append(entries, `{"type":"file","oid":"y","size":10,"path":"README.md"}`)
		fmt.Fprint(w, "["+strings.Join(entries, ",")+"]")
	})
	mux.HandleFunc("GET /test/tiny-GGUF/resolve/main/{file}", func(w http.ResponseWriter, r *http.Request) {
		f, ok := files[r.PathValue("file")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		f.ServeHTTP(w, r)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	t.Setenv(models.EnvHubURL, srv.URL)
	t.Setenv(models.EnvHubToken, "")
	dir := t.TempDir()

	if _, stderr, code := run(t, "pull", "test/tiny-GGUF:Q5_K_M", "-o", dir); code != 1 || !strings.Contains(stderr, "Q8_0") {
		t.Fatalf("missing quant: exit %d: %s", code, stderr)
	}
	out, stderr, code := run(t, "pull", "test/tiny-GGUF:q8_0", "-o", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "header read in") {
		t.Errorf("no memory check in %s", stderr)
	}
	lines := strings.Fields(out)
	if len(lines) != 2 {
		t.Fatalf("stdout %q", out)
	}
	for i, p := range lines {
		got, _ := os.ReadFile(p)
		want := data
		if i == 1 {
			want = second
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs", p)
		}
	}

	out, stderr, code = run(t, "models", "--json", "--dir", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var ms []modelJSON
	if err := json.Unmarshal([]byte(out), &ms); err != nil || len(ms) != 1 {
		t.Fatalf("%v: %s", err, out)
	}
	m := ms[0]
	if len(m.Parts) != 2 || m.Origin.Repo != "test/tiny-GGUF" || m.Origin.SHA256 != hexSum(data) || m.Architecture != "llama" ||
		m.Size != int64(len(data)+len(second)) || !m.Managed {
		t.Errorf("%+v", m)
	}
	if out, _, _ := run(t, "models", "--dir", dir); !strings.Contains(out, "llama") {
		t.Errorf("table: %s", out)
	}
	if _, stderr, code := run(t, "rm", "tiny", "--dir", dir); code != 2 || !strings.Contains(stderr, "-y") {
		t.Errorf("rm without -y: exit %d %s", code, stderr)
	}
	if out, stderr, code := run(t, "rm", "-y", "--dir", dir, "tiny-Q8_0-00001-of-00002"); code != 0 || !strings.Contains(out, "deleted") {
		t.Fatalf("rm: exit %d %s %s", code, out, stderr)
	}
	for _, p := range lines {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s still there", p)
		}
	}
}
