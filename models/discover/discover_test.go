package discover

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func write(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func link(t *testing.T, target, p string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, p); err != nil {
		t.Skipf("symbolic links unavailable: %v", err)
	}
}

const gguf = "GGUF\x03\x00\x00\x00rest of a header"

func TestFind(t *testing.T) {
	home := t.TempDir()
	lm := filepath.Join(home, ".lmstudio", "models")
	write(t, filepath.Join(lm, "lmstudio-community", "Qwen3-0.6B-GGUF", "Qwen3-0.6B-Q4_K_M.gguf"), gguf)
	write(t, filepath.Join(lm, "lmstudio-community", "Qwen3-0.6B-GGUF", "mmproj-Qwen3-F16.gguf"), gguf)
	write(t, filepath.Join(lm, "someone", "Big-GGUF", "Big-Q8_0-00001-of-00002.gguf"), gguf)
	write(t, filepath.Join(lm, "someone", "Big-GGUF", "Big-Q8_0-00002-of-00002.gguf"), gguf)
	write(t, filepath.Join(lm, "someone", "Fake-GGUF", "notreally.gguf"), "<html>404</html>")
	write(t, filepath.Join(lm, "someone", "Fake-GGUF", "readme.md"), "hello")
	write(t, filepath.Join(lm, ".trash", "x", "old.gguf"), gguf)

	hub := filepath.Join(home, "hf", "hub")
	repo := filepath.Join(hub, "models--TheBloke--TinyLlama-GGUF")
	blob := filepath.Join(repo, "blobs", "0123abcd")
	write(t, blob, gguf)
	link(t, blob, filepath.Join(repo, "snapshots", "rev1", "tinyllama.Q4_0.gguf"))
	// A second revision pointing at the same blob is the same file.
	link(t, blob, filepath.Join(repo, "snapshots", "rev2", "tinyllama.Q4_0.gguf"))
	// A link to a blob still downloading dangles.
	link(t, filepath.Join(repo, "blobs", "missing"), filepath.Join(repo, "snapshots", "rev2", "partial.gguf"))

	locs := []Location{
		{lm, LMStudio},
		{hub, HuggingFace},
		{filepath.Join(home, "does-not-exist"), LMStudio},
	}
	got, err := Find(context.Background(), locs)
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		Name, Repo string
		Source     Source
	}
	var rows []row
	for _, m := range got {
		rows = append(rows, row{m.Name, m.Repo, m.Source})
		if m.Size != int64(len(gguf)) {
			t.Errorf("%s: size %d, want %d", m.Path, m.Size, len(gguf))
		}
		if m.Source == HuggingFace && m.Real != blob {
			t.Errorf("%s: real path %s, want the blob %s", m.Path, m.Real, blob)
		}
	}
	want := []row{
		{"tinyllama.Q4_0", "TheBloke/TinyLlama-GGUF", HuggingFace},
		{"Qwen3-0.6B-Q4_K_M", "lmstudio-community/Qwen3-0.6B-GGUF", LMStudio},
		{"Big-Q8_0-00001-of-00002", "someone/Big-GGUF", LMStudio},
	}
	if !reflect.DeepEqual(rows, want) {
		t.Errorf("found\n%v\nwant\n%v", rows, want)
	}
	// The path offered is the readable snapshot path, not the blob.
	for _, m := range got {
		if m.Source == HuggingFace && filepath.Base(filepath.Dir(filepath.Dir(m.Path))) != "snapshots" {
			t.Errorf("hub model offered as %s, want a snapshots/ path", m.Path)
		}
	}
}

// TestFindOllama: Ollama's models are found through their manifests,
// named as Ollama names them, and opened at their blob (which has no
// .gguf to find it by); a manifest whose blob is missing or is not GGUF
// is skipped.
func TestFindOllama(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".ollama", "models")
	manifest := func(rel, digest string) {
		write(t, filepath.Join(dir, "manifests", rel), `{"schemaVersion":2,"layers":[`+
			`{"mediaType":"application/vnd.ollama.image.template","digest":"sha256:aaaa","size":10},`+
			`{"mediaType":"application/vnd.ollama.image.model","digest":"`+digest+`","size":40}]}`)
	}
	blob := func(hex, content string) { write(t, filepath.Join(dir, "blobs", "sha256-"+hex), content) }
	blob("aaaa", "{{ .Prompt }}")
	blob("1111", gguf)
	blob("2222", gguf+"more")
	blob("3333", "not a model")
	manifest("registry.ollama.ai/library/llama3.2/3b", "sha256:1111")
	manifest("registry.ollama.ai/library/llama3.2/latest", "sha256:1111") // a second tag of the same blob
	manifest("registry.ollama.ai/someone/tiny/q4", "sha256:2222")
	manifest("registry.ollama.ai/library/broken/1b", "sha256:3333")
	manifest("registry.ollama.ai/library/gone/1b", "sha256:4444")
	manifest("registry.ollama.ai/library/evil/1b", "sha256:../../x")
	write(t, filepath.Join(dir, "manifests", "registry.ollama.ai", "library", "junk", "1b"), "{not json")

	got, err := Find(context.Background(), []Location{{dir, Ollama}})
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		Name, Path string
		Size       int64
	}
	var rows []row
	for _, m := range got {
		if m.Source != Ollama {
			t.Errorf("%s: source %q", m.Name, m.Source)
		}
		rows = append(rows, row{m.Name, m.Path, m.Size})
	}
	want := []row{
		{"llama3.2:3b", filepath.Join(dir, "blobs", "sha256-1111"), int64(len(gguf))},
		{"someone/tiny:q4", filepath.Join(dir, "blobs", "sha256-2222"), int64(len(gguf) + 4)},
	}
	if !reflect.DeepEqual(rows, want) {
		t.Errorf("found\n%v\nwant\n%v", rows, want)
	}
	// The window names a blob as Ollama does, not by its hash.
	for _, c := range []struct {
		path, name string
		ok         bool
	}{
		{filepath.Join(dir, "blobs", "sha256-2222"), "someone/tiny:q4", true},
		{filepath.Join(dir, "blobs", "sha256-3333"), "", false}, // not a model
		{filepath.Join(dir, "blobs", "tiny.gguf"), "", false},
	} {
		if name, ok := OllamaName(c.path); name != c.name || ok != c.ok {
			t.Errorf("OllamaName(%s) = %q, %v; want %q, %v", c.path, name, ok, c.name, c.ok)
		}
	}
}

func TestFindCancelled(t *testing.T) {
	home := t.TempDir()
	write(t, filepath.Join(home, "a", "b", "m.gguf"), gguf)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Find(ctx, []Location{{home, Other}}); err == nil {
		t.Fatal("Find with a cancelled context returned no error")
	}
}

func TestFindEmpty(t *testing.T) {
	got, err := Find(context.Background(), nil)
	if err != nil || len(got) != 0 {
		t.Fatalf("Find(nil) = %v, %v; want nothing", got, err)
	}
}

func TestLocations(t *testing.T) {
	home := "/home/u"
	env := func(m map[string]string) func(string) string {
		return func(k string) string { return m[k] }
	}
	lm := []Location{
		{"/home/u/.lmstudio/models", LMStudio},
		{"/home/u/.cache/lm-studio/models", LMStudio},
	}
	defHub := Location{"/home/u/.cache/huggingface/hub", HuggingFace}
	ollama := Location{"/home/u/.ollama/models", Ollama}
	cases := []struct {
		name string
		env  map[string]string
		want []Location
	}{
		{"defaults", nil, append(lm, defHub, ollama)},
		{"HF_HOME", map[string]string{"HF_HOME": "/data/hf"},
			append(lm, Location{"/data/hf/hub", HuggingFace}, defHub, ollama)},
		{"HF_HUB_CACHE wins over HF_HOME", map[string]string{"HF_HOME": "/data/hf", "HF_HUB_CACHE": "/fast/hub"},
			append(lm, Location{"/fast/hub", HuggingFace}, defHub, ollama)},
		{"XDG_CACHE_HOME", map[string]string{"XDG_CACHE_HOME": "/xdg"},
			append(lm, Location{"/xdg/huggingface/hub", HuggingFace}, defHub, ollama)},
		{"same as default is listed once", map[string]string{"HF_HOME": "/home/u/.cache/huggingface"},
			append(lm, defHub, ollama)},
		{"OLLAMA_MODELS first", map[string]string{"OLLAMA_MODELS": "/srv/ollama"},
			append(lm, defHub, Location{"/srv/ollama", Ollama}, ollama)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Locations(env(c.env), home)
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("got  %v\nwant %v", got, c.want)
			}
		})
	}
	if got := Locations(env(nil), ""); len(got) != 0 {
		t.Errorf("no home and no environment: got %v, want nothing", got)
	}
}
