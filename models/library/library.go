package library

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/churon/churon/internal/atomicfile"
	"github.com/churon/churon/internal/ctxio"
	"github.com/churon/churon/internal/ggufname"
	"github.com/churon/churon/models/fit"
)

// IndexFile is the index's name inside the library folder.
const IndexFile = "library.json"

// Errors.
var (
	ErrNotFound  = errors.New("library: no such model")
	ErrAmbiguous = errors.New("library: more than one model matches")
	ErrNoHash    = errors.New("library: no known SHA-256 for this model")
)

// Origin says where a model came from.
type Origin struct {
	Repo     string `json:"repo,omitempty"`
	Revision string `json:"revision,omitempty"`
	File     string `json:"file,omitempty"`
	URL      string `json:"url,omitempty"`
	SHA256   string `json:"sha256,omitempty"` // of the first (or only) file
}

type record struct {
	Origin Origin    `json:"origin"`
	Added  time.Time `json:"added"`
}

type index struct {
	Version int               `json:"version"`
	Folders []string          `json:"folders,omitempty"`
	Files   []string          `json:"files,omitempty"` // used in place
	Records map[string]record `json:"records,omitempty"`
}

// Model is one model in the library.
type Model struct {
	Path    string   `json:"path"`
	Parts   []string `json:"parts,omitempty"` // every part of a split model, in order
	Size    int64    `json:"size"`            // all parts
	Managed bool     `json:"managed"`         // inside the library folder (downloaded): Delete removes the file
	Origin  Origin   `json:"origin"`
	Meta    fit.Meta `json:"meta"`
	Err     string   `json:"error,omitempty"` // the header could not be read
}

// Name is what to call the model: its general.name, else its file name.
func (m Model) Name() string {
	if m.Meta.Name != "" {
		return m.Meta.Name
	}
	return strings.TrimSuffix(filepath.Base(m.Path), ".gguf")
}

// Library is a folder of models plus its index. Its methods are safe for
// concurrent use within one process.
type Library struct {
	dir      string
	describe Describe
	mu       sync.Mutex
}

// Describe reads what a GGUF file's header says of its model:
// models/header's Local, given by whoever opens the library, so that this
// package (and what front ends import of it) stays free of the engine.
type Describe func(path string) (fit.Meta, error)

// Open opens (creating if needed) the library in dir; describe reads the
// models' headers.
func Open(dir string, describe Describe) (*Library, error) {
	if describe == nil {
		return nil, errors.New("library: open: no header reader")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("library: %w", err)
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return nil, fmt.Errorf("library: %w", err)
	}
	return &Library{dir: abs, describe: describe}, nil
}

// Dir is the library folder, where downloads go.
func (l *Library) Dir() string { return l.dir }

func (l *Library) load() (*index, error) {
	ix := &index{Version: 1, Records: map[string]record{}}
	data, err := os.ReadFile(filepath.Join(l.dir, IndexFile))
	if errors.Is(err, os.ErrNotExist) {
		return ix, nil
	}
	if err != nil {
		return nil, fmt.Errorf("library: %w", err)
	}
	if err := json.Unmarshal(data, ix); err != nil {
		return nil, fmt.Errorf("library: index %s: %w", filepath.Join(l.dir, IndexFile), err)
	}
	if ix.Records == nil {
		ix.Records = map[string]record{}
	}
	return ix, nil
}

func (l *Library) save(ix *index) error {
	data, err := json.MarshalIndent(ix, "", "  ")
	if err != nil {
		return fmt.Errorf("library: %w", err)
	}
	if err := atomicfile.WriteFile(filepath.Join(l.dir, IndexFile), data, 0o644); err != nil {
		return fmt.Errorf("library: %w", err)
	}
	return nil
}

func (l *Library) update(f func(ix *index) error) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	ix, err := l.load()
	if err != nil {
		return err
	}
	if err := f(ix); err != nil {
		return err
	}
	return l.save(ix)
}

// Record remembers where a model file came from (after a download).
func (l *Library) Record(path string, o Origin) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return fmt.Errorf("library: %w", err)
	}
	o.SHA256 = strings.ToLower(o.SHA256)
	return l.update(func(ix *index) error {
		ix.Records[abs] = record{Origin: o, Added: time.Now().UTC()}
		return nil
	})
}

// AddFile uses a GGUF file where it is, without copying it.
func (l *Library) AddFile(path string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return fmt.Errorf("library: %w", err)
	}
	if _, err := l.describe(abs); err != nil {
		return fmt.Errorf("library: add %s: %w", path, err)
	}
	return l.update(func(ix *index) error {
		if !slices.Contains(ix.Files, abs) {
			ix.Files = append(ix.Files, abs)
		}
		return nil
	})
}

// AddFolder adds a folder whose GGUF files are listed (in place).
func (l *Library) AddFolder(dir string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("library: %w", err)
	}
	if st, err := os.Stat(abs); err != nil || !st.IsDir() {
		return fmt.Errorf("library: add folder %s: not a folder", dir)
	}
	return l.update(func(ix *index) error {
		if !slices.Contains(ix.Folders, abs) {
			ix.Folders = append(ix.Folders, abs)
		}
		return nil
	})
}

// Folders lists the added folders.
func (l *Library) Folders() ([]string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	ix, err := l.load()
	if err != nil {
		return nil, err
	}
	return ix.Folders, nil
}

const maxDepth = 6

// List returns every model, sorted by name. Files that are still being
// downloaded (*.part) are not models; parts of a split model are listed
// once, under their first part.
func (l *Library) List(ctx context.Context) ([]Model, error) {
	l.mu.Lock()
	ix, err := l.load()
	l.mu.Unlock()
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var out []Model
	add := func(path string, managed bool) {
		if seen[path] {
			return
		}
		seen[path] = true
		m, ok := l.model(path, ix)
		if ok {
			m.Managed = managed
			out = append(out, m)
		}
	}
	roots := append([]string{l.dir}, ix.Folders...)
	for i, root := range roots {
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if err != nil {
				return nil
			}
			if d.IsDir() {
				if rel, _ := filepath.Rel(root, p); strings.Count(rel, string(filepath.Separator)) >= maxDepth {
					return filepath.SkipDir
				}
				return nil
			}
			if ggufname.IsGGUF(d.Name()) {
				add(p, i == 0)
			}
			return nil
		})
	}
	for _, f := range ix.Files {
		add(f, false)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("library: %w", err)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := strings.ToLower(out[i].Name()), strings.ToLower(out[j].Name())
		if a != b {
			return a < b
		}
		return out[i].Path < out[j].Path
	})
	return out, nil
}

// model reads one model; ok is false for a later part of a split model.
func (l *Library) model(path string, ix *index) (Model, bool) {
	m := Model{Path: path, Origin: ix.Records[path].Origin}
	base := filepath.Base(path)
	if prefix, part, total, split := ggufname.Split(base); split {
		if part != 1 {
			return Model{}, false
		}
		for i := 1; i <= total; i++ {
			m.Parts = append(m.Parts, filepath.Join(filepath.Dir(path), ggufname.PartName(prefix, i, total)))
		}
	}
	files := m.Parts
	if files == nil {
		files = []string{path}
	}
	for _, f := range files {
		st, err := os.Stat(f)
		if err != nil {
			m.Err = fmt.Sprintf("missing part %s", filepath.Base(f))
			continue
		}
		m.Size += st.Size()
	}
	meta, err := l.describe(path)
	if err != nil && m.Err == "" {
		m.Err = err.Error()
	}
	m.Meta = meta
	if len(files) > 1 {
		// Weights are spread over the parts.
		m.Meta.WeightBytes = m.Size - meta.HeaderBytes
	}
	return m, true
}

// Find returns the model whose path, file name or name is query (case
// insensitive), or the only one whose name contains it.
func (l *Library) Find(ctx context.Context, query string) (Model, error) {
	all, err := l.List(ctx)
	if err != nil {
		return Model{}, err
	}
	if abs, err := filepath.Abs(query); err == nil {
		for _, m := range all {
			if m.Path == abs {
				return m, nil
			}
		}
	}
	var exact, partial []Model
	q := strings.ToLower(query)
	for _, m := range all {
		file := strings.ToLower(filepath.Base(m.Path))
		switch {
		case file == q || strings.TrimSuffix(file, ".gguf") == q || strings.ToLower(m.Name()) == q:
			exact = append(exact, m)
		case strings.Contains(file, q) || strings.Contains(strings.ToLower(m.Name()), q):
			partial = append(partial, m)
		}
	}
	switch {
	case len(exact) == 1:
		return exact[0], nil
	case len(exact) > 1:
		return Model{}, fmt.Errorf("%w: %q (%d models; give a path)", ErrAmbiguous, query, len(exact))
	case len(partial) == 1:
		return partial[0], nil
	case len(partial) > 1:
		return Model{}, fmt.Errorf("%w: %q (%d models; give a path)", ErrAmbiguous, query, len(partial))
	}
	return Model{}, fmt.Errorf("%w: %q", ErrNotFound, query)
}

// Delete removes a model. A model inside the library folder is deleted
// from disk (all its parts); one used in place or found in an added
// folder belongs to someone else: only the reference is dropped, and
// deleted reports false.
func (l *Library) Delete(m Model) (deleted bool, err error) {
	files := m.Parts
	if files == nil {
		files = []string{m.Path}
	}
	inside := true
	for _, f := range files {
		rel, err := filepath.Rel(l.dir, f)
		if err != nil || strings.HasPrefix(rel, "..") {
			inside = false
		}
	}
	if inside {
		for _, f := range files {
			if err := os.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
				return false, fmt.Errorf("library: delete: %w", err)
			}
		}
	}
	err = l.update(func(ix *index) error {
		delete(ix.Records, m.Path)
		kept := ix.Files[:0]
		for _, f := range ix.Files {
			if f != m.Path {
				kept = append(kept, f)
			}
		}
		ix.Files = kept
		return nil
	})
	return inside, err
}

// Verify recomputes the SHA-256 of the model's (first) file and compares
// it with the recorded one.
func (l *Library) Verify(ctx context.Context, m Model) (got string, err error) {
	if m.Origin.SHA256 == "" {
		return "", fmt.Errorf("%w: %s", ErrNoHash, m.Path)
	}
	f, err := os.Open(m.Path)
	if err != nil {
		return "", fmt.Errorf("library: verify: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, ctxio.Reader(ctx, f)); err != nil {
		return "", fmt.Errorf("library: verify %s: %w", m.Path, err)
	}
	got = hex.EncodeToString(h.Sum(nil))
	if got != m.Origin.SHA256 {
		return got, fmt.Errorf("library: %s: SHA-256 is %s, expected %s: the file is damaged", m.Path, got, m.Origin.SHA256)
	}
	return got, nil
}
