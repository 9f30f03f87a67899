package discover

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/churon/churon/internal/ggufname"
)

// Source names the app whose folder a file was found in.
type Source string

const (
	LMStudio    Source = "LM Studio"
	HuggingFace Source = "Hugging Face"
	Ollama      Source = "Ollama"
	Other       Source = "Folder"
)

// Location is one folder to search.
type Location struct {
	Dir    string
	Source Source
}

// Model is one GGUF file found on disk.
type Model struct {
	// Path is the file as the app that owns it sees it (for the Hugging
	// Face cache, the snapshot path, which names the repository and file).
	// Open it in place.
	Path string
	// Real is Path with symbolic links resolved; two Models never share it.
	Real    string
	Name    string // file name without ".gguf"
	Repo    string // "owner/name" where the layout says so, else ""
	Source  Source
	Size    int64
	ModTime time.Time
}

// Limits on a walk, so a huge or looping tree cannot hang the welcome view.
const (
	maxDepth = 8
	maxFiles = 500
)

// DefaultLocations lists the folders other apps keep models in, for the
// current user and environment. Folders that do not exist are kept: Find
// skips them quietly.
func DefaultLocations() []Location {
	home, _ := os.UserHomeDir()
	return Locations(os.Getenv, home)
}

// Locations is DefaultLocations with the environment and home folder
// given, for tests.
func Locations(getenv func(string) string, home string) []Location {
	var locs []Location
	add := func(dir string, src Source) {
		if dir == "" {
			return
		}
		dir = filepath.Clean(dir)
		for _, l := range locs {
			if l.Dir == dir {
				return
			}
		}
		locs = append(locs, Location{dir, src})
	}
	if home != "" {
		// LM Studio 0.3 and later, then the 0.2 layout.
		add(filepath.Join(home, ".lmstudio", "models"), LMStudio)
		add(filepath.Join(home, ".cache", "lm-studio", "models"), LMStudio)
	}
	// The hub cache: $HF_HUB_CACHE, else $HF_HOME/hub, else
	// $XDG_CACHE_HOME/huggingface/hub, else ~/.cache/huggingface/hub — the
	// order huggingface_hub itself uses.
	switch {
	case getenv("HF_HUB_CACHE") != "":
		add(getenv("HF_HUB_CACHE"), HuggingFace)
	case getenv("HF_HOME") != "":
		add(filepath.Join(getenv("HF_HOME"), "hub"), HuggingFace)
	case getenv("XDG_CACHE_HOME") != "":
		add(filepath.Join(getenv("XDG_CACHE_HOME"), "huggingface", "hub"), HuggingFace)
	}
	if home != "" {
		add(filepath.Join(home, ".cache", "huggingface", "hub"), HuggingFace)
	}
	// Ollama: $OLLAMA_MODELS, else ~/.ollama/models (the Linux service
	// keeps its own under /usr/share/ollama, readable by its user only).
	add(getenv("OLLAMA_MODELS"), Ollama)
	if home != "" {
		add(filepath.Join(home, ".ollama", "models"), Ollama)
	}
	return locs
}

var ggufMagic = []byte("GGUF")

// Find walks the locations and returns the GGUF files in them, largest
// repositories grouped together: sorted by source, repository, then name.
// A folder that does not exist or cannot be read is skipped; Find returns
// an error only when ctx is cancelled.
func Find(ctx context.Context, locs []Location) ([]Model, error) {
	var out []Model
	seen := map[string]bool{}
	for _, loc := range locs {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("discover: %w", err)
		}
		found, err := walk(ctx, loc, seen, maxFiles-len(out))
		if err != nil {
			return nil, err
		}
		out = append(out, found...)
		if len(out) >= maxFiles {
			break
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Source != b.Source {
			return a.Source < b.Source
		}
		if a.Repo != b.Repo {
			return a.Repo < b.Repo
		}
		return a.Name < b.Name
	})
	return out, nil
}

func walk(ctx context.Context, loc Location, seen map[string]bool, budget int) ([]Model, error) {
	root := loc.Dir
	if st, err := os.Stat(root); err != nil || !st.IsDir() {
		return nil, nil
	}
	if loc.Source == Ollama {
		return walkOllama(ctx, loc, seen, budget)
	}
	dir := func(p, rel string, d fs.DirEntry) error {
		depth := strings.Count(rel, string(filepath.Separator))
		if depth >= maxDepth || (p != root && strings.HasPrefix(d.Name(), ".")) {
			return fs.SkipDir
		}
		// The hub cache keeps file contents under blobs/ with hash
		// names; the snapshots/ links name them, so blobs/ is skipped.
		if loc.Source == HuggingFace && d.Name() == "blobs" {
			return fs.SkipDir
		}
		return nil
	}
	return collect(ctx, root, seen, budget, dir, func(p, rel string) (Model, bool) { return inspect(p, rel, loc) })
}

// collect walks root and keeps the models that inspect finds among its
// files (rel: the file's path below root), each real file once (seen is
// shared by all locations) and at most budget of them; dir says whether
// to enter a folder (nil) or not (fs.SkipDir). What cannot be read is
// passed over: only the end of ctx is an error.
func collect(ctx context.Context, root string, seen map[string]bool, budget int,
	dir func(p, rel string, d fs.DirEntry) error, inspect func(p, rel string) (Model, bool)) ([]Model, error) {
	var out []Model
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		if err != nil {
			// An unreadable folder is not the person's problem here.
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			return dir(p, rel, d)
		}
		if len(out) >= budget {
			return fs.SkipAll
		}
		m, ok := inspect(p, rel)
		if !ok || seen[m.Real] {
			return nil
		}
		seen[m.Real] = true
		out = append(out, m)
		return nil
	})
	if err != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		return nil, fmt.Errorf("discover: %w", err)
	}
	return out, nil
}

// inspect decides whether p is a usable GGUF model and describes it.
func inspect(p, rel string, loc Location) (Model, bool) {
	name := filepath.Base(p)
	if !ggufname.IsGGUF(name) || ggufname.IsProjector(name) {
		return Model{}, false
	}
	// A split model is listed once, by its first part.
	if _, part, _, split := ggufname.Split(strings.ToLower(name)); split && part != 1 {
		return Model{}, false
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return Model{}, false // a dangling link: an unfinished download
	}
	st, err := os.Stat(real)
	if err != nil || !st.Mode().IsRegular() {
		return Model{}, false
	}
	if !hasMagic(real) {
		return Model{}, false
	}
	return Model{
		Path:    p,
		Real:    real,
		Name:    strings.TrimSuffix(name, name[len(name)-len(".gguf"):]),
		Repo:    repoOf(rel, loc.Source),
		Source:  loc.Source,
		Size:    st.Size(),
		ModTime: st.ModTime(),
	}, true
}

func hasMagic(p string) bool {
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	buf := make([]byte, len(ggufMagic))
	if _, err := io.ReadFull(f, buf); err != nil {
		return false
	}
	return string(buf) == string(ggufMagic)
}

// repoOf reads the repository from the folder layout:
// LM Studio keeps publisher/repo/file.gguf, the hub cache
// models--owner--name/snapshots/<revision>/file.gguf.
func repoOf(rel string, src Source) string {
	parts := strings.Split(filepath.ToSlash(rel), "/")
	switch src {
	case LMStudio:
		if len(parts) >= 3 {
			return parts[0] + "/" + parts[1]
		}
	case HuggingFace:
		if len(parts) >= 2 && strings.HasPrefix(parts[0], "models--") {
			owner, name, ok := strings.Cut(strings.TrimPrefix(parts[0], "models--"), "--")
			if ok {
				return owner + "/" + name
			}
		}
	}
	return ""
}

// Ollama keeps a model as a manifest, manifests/<registry>/<namespace>/
// <name>/<tag>, whose layers name content-addressed blobs; the layer of
// type ollamaModelLayer is the GGUF file, blobs/sha256-<hex>, with no
// extension to find it by.
const ollamaModelLayer = "application/vnd.ollama.image.model"

type ollamaManifest struct {
	Layers []struct {
		MediaType string `json:"mediaType"`
		Digest    string `json:"digest"`
	} `json:"layers"`
}

func walkOllama(ctx context.Context, loc Location, seen map[string]bool, budget int) ([]Model, error) {
	enter := func(p, rel string, d fs.DirEntry) error { return nil }
	return collect(ctx, filepath.Join(loc.Dir, "manifests"), seen, budget, enter,
		func(p, rel string) (Model, bool) { return inspectOllama(loc, p, rel) })
}

// inspectOllama reads one manifest (rel: registry/namespace/name/tag) and
// describes its model blob.
func inspectOllama(loc Location, manifest, rel string) (Model, bool) {
	parts := strings.Split(filepath.ToSlash(rel), "/")
	if len(parts) != 4 {
		return Model{}, false
	}
	data, err := os.ReadFile(manifest)
	if err != nil || len(data) > 1<<20 {
		return Model{}, false
	}
	var mf ollamaManifest
	if json.Unmarshal(data, &mf) != nil {
		return Model{}, false
	}
	for _, l := range mf.Layers {
		algo, hex, ok := strings.Cut(l.Digest, ":")
		if l.MediaType != ollamaModelLayer || !ok || algo != "sha256" || hex == "" || strings.ContainsAny(hex, `/\.`) {
			continue
		}
		blob := filepath.Join(loc.Dir, "blobs", "sha256-"+hex)
		real, err := filepath.EvalSymlinks(blob)
		if err != nil {
			return Model{}, false // not pulled to the end
		}
		st, err := os.Stat(real)
		if err != nil || !st.Mode().IsRegular() || !hasMagic(real) {
			return Model{}, false
		}
		// Named as Ollama names it: "llama3.2:3b", or with its namespace
		// when it is not the library's.
		name := parts[2] + ":" + parts[3]
		if parts[1] != "library" {
			name = parts[1] + "/" + name
		}
		return Model{Path: blob, Real: real, Name: name, Source: Ollama, Size: st.Size(), ModTime: st.ModTime()}, true
	}
	return Model{}, false
}

// ollamaNames caches OllamaName's answers by blob path.
var ollamaNames sync.Map

// OllamaName is the name Ollama gives the model whose GGUF blob is at
// path ("llama3.2:3b"), for showing it: the blob's own name is a hash.
// ok is false for a path that is not one of Ollama's model blobs. The
// manifests are read once per blob.
func OllamaName(path string) (name string, ok bool) {
	base := filepath.Base(path)
	dir := filepath.Dir(path)
	if !strings.HasPrefix(base, "sha256-") || filepath.Base(dir) != "blobs" {
		return "", false
	}
	if v, hit := ollamaNames.Load(path); hit {
		name = v.(string)
		return name, name != ""
	}
	loc := Location{Dir: filepath.Dir(dir), Source: Ollama}
	found, _ := walkOllama(context.Background(), loc, map[string]bool{}, maxFiles)
	for _, m := range found {
		if m.Path == path && name == "" {
			name = m.Name
		}
	}
	ollamaNames.Store(path, name)
	return name, name != ""
}
