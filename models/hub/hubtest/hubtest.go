// Package hubtest serves the Hugging Face Hub's API shape on a local HTTP
// server for tests: a model search, recursive file listings with LFS
// SHA-256s, and file downloads with Range support. Tests never call the
// real hub.
package hubtest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/churon/churon/engine/quant"
	"github.com/churon/churon/models/synth"
)

// Hub speaks the Hugging Face Hub's API shape on a local server: a
// model search, recursive file listings with LFS SHA-256s, and file
// downloads with Range support. Hold makes downloads stop after a number
// of bytes until Unhold (or until the request is abandoned).
type Hub struct {
	Server *httptest.Server
	Repos  map[string][]File

	mu      sync.Mutex
	holdAt  int64 // 0: no hold
	release chan struct{}

	Ranged atomic.Int64 // resolve requests that asked for a range
	Served atomic.Int64 // bytes of file content sent
}

// File is one file of a repository.
type File struct {
	Path string
	Data []byte
}

// SHA256 is the file's hex SHA-256, as the hub's LFS listing gives it.
func (f File) SHA256() string {
	h := sha256.Sum256(f.Data)
	return hex.EncodeToString(h[:])
}

// TinyGGUF generates a small llama model the engine can load.
func TinyGGUF(t testing.TB, typ quant.Type, seed uint64) []byte {
	t.Helper()
	spec := synth.Tiny("llama")
	spec.Type, spec.Seed = typ, seed
	p := filepath.Join(t.TempDir(), "m.gguf")
	if err := synth.Write(p, spec); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Repo is the repository New serves tiny llama models in (F32 and Q8_0,
// beside a README); New also serves a repository of one broken file.
const Repo = "test/tiny-llama-GGUF"

// New starts the hub; it stops when the test ends.
func New(t testing.TB) *Hub {
	t.Helper()
	h := &Hub{Repos: map[string][]File{
		Repo: {
			{"README.md", []byte("# tiny\n")},
			{"tiny-llama-F32.gguf", TinyGGUF(t, quant.F32, 1)},
			{"tiny-llama-Q8_0.gguf", TinyGGUF(t, quant.Q8_0, 1)},
		},
		"other/not-this-one-GGUF": {{"x-Q4_K_M.gguf", []byte("GGUF")}},
	}}
	h.Server = httptest.NewServer(http.HandlerFunc(h.serve))
	t.Cleanup(h.Server.Close)
	return h
}

// File returns a served file; it panics when there is none.
func (h *Hub) File(repo, name string) File {
	for _, f := range h.Repos[repo] {
		if f.Path == name {
			return f
		}
	}
	panic("hubtest: no file " + repo + "/" + name)
}

// Hold stops every download at byte n until release.
func (h *Hub) Hold(n int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.holdAt, h.release = n, make(chan struct{})
}

// Unhold lets held downloads go on.
func (h *Hub) Unhold() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.release != nil {
		close(h.release)
	}
	h.holdAt, h.release = 0, nil
}

func (h *Hub) serve(w http.ResponseWriter, r *http.Request) {
	p := strings.Trim(r.URL.Path, "/")
	parts := strings.Split(p, "/")
	switch {
	case p == "api/models":
		q := r.URL.Query()
		if q.Get("filter") != "gguf" {
			http.Error(w, "want filter=gguf", 400)
			return
		}
		var out []map[string]any
		for id := range h.Repos {
			if strings.Contains(strings.ToLower(id), strings.ToLower(q.Get("search"))) {
				out = append(out, map[string]any{"_id": id, "id": id, "downloads": 12345, "likes": 67, "gated": false, "tags": []string{"gguf"}})
			}
		}
		json.NewEncoder(w).Encode(out)
	case len(parts) == 6 && parts[0] == "api" && parts[1] == "models" && parts[4] == "tree":
		files, ok := h.Repos[parts[2]+"/"+parts[3]]
		if !ok {
			http.Error(w, `{"error":"Repository not found"}`, 404)
			return
		}
		var out []map[string]any
		for _, f := range files {
			e := map[string]any{"type": "file", "path": f.Path, "size": len(f.Data), "oid": "x"}
			if strings.HasSuffix(f.Path, ".gguf") {
				e["size"] = 134
				e["lfs"] = map[string]any{"oid": f.SHA256(), "size": len(f.Data), "pointerSize": 134}
			}
			out = append(out, e)
		}
		json.NewEncoder(w).Encode(out)
	case len(parts) >= 5 && parts[2] == "resolve":
		repo := parts[0] + "/" + parts[1]
		name := strings.Join(parts[4:], "/")
		for _, f := range h.Repos[repo] {
			if f.Path == name {
				if r.Header.Get("Range") != "" {
					h.Ranged.Add(1)
				}
				h.mu.Lock()
				rd := &heldReader{ReadSeeker: bytes.NewReader(f.Data), at: h.holdAt, release: h.release, done: r.Context().Done(), served: &h.Served}
				h.mu.Unlock()
				http.ServeContent(w, r, name, time.Unix(1_700_000_000, 0), rd)
				return
			}
		}
		http.NotFound(w, r)
	default:
		http.NotFound(w, r)
	}
}

// heldReader blocks reads past a position until released.
type heldReader struct {
	io.ReadSeeker
	pos     int64
	at      int64
	release chan struct{}
	done    <-chan struct{}
	served  *atomic.Int64
}

func (r *heldReader) Seek(off int64, whence int) (int64, error) {
	n, err := r.ReadSeeker.Seek(off, whence)
	r.pos = n
	return n, err
}

func (r *heldReader) Read(p []byte) (int, error) {
	if r.release != nil && r.at > 0 {
		if r.pos >= r.at {
			select {
			case <-r.release:
				r.release = nil
			case <-r.done:
				return 0, errors.New("client went away")
			}
		} else if int64(len(p)) > r.at-r.pos {
			p = p[:r.at-r.pos]
		}
	}
	n, err := r.ReadSeeker.Read(p)
	r.pos += int64(n)
	r.served.Add(int64(n))
	return n, err
}

// URL is the hub's base address.
func (h *Hub) URL() string { return h.Server.URL }
