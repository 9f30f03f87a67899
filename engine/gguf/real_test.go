package gguf

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/churon/churon/engine/quant"
	"github.com/churon/churon/internal/testdata"
)

// realFiles lists every GGUF in the shared test data.
func realFiles(t testing.TB) []string {
	dir := testdata.Dir(t)
	var files []string
	for _, sub := range []string{"models", "quantzoo", "vocab"} {
		m, err := filepath.Glob(filepath.Join(dir, sub, "*.gguf"))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) < 10 {
		t.Fatalf("found only %d GGUF files under %s", len(files), dir)
	}
	return files
}

// checkInvariants checks what must hold for any File the reader returns.
func checkInvariants(t *testing.T, f *File) {
	t.Helper()
	if f.Version != 2 && f.Version != 3 {
		t.Errorf("version %d", f.Version)
	}
	if f.Alignment == 0 || f.Alignment&(f.Alignment-1) != 0 || f.DataOffset%f.Alignment != 0 {
		t.Errorf("alignment %d, data offset %d", f.Alignment, f.DataOffset)
	}
	if f.HeaderSize() != f.DataOffset {
		t.Errorf("HeaderSize %d != DataOffset %d", f.HeaderSize(), f.DataOffset)
	}
	for i, kv := range f.KV {
		v, ok := f.Lookup(kv.Key)
		if !ok || !reflect.DeepEqual(v, kv.Value) {
			t.Errorf("Lookup(%q) does not return KV[%d]", kv.Key, i)
		}
	}
	for i := range f.Tensors {
		ti := &f.Tensors[i]
		got, ok := f.Tensor(ti.Name)
		if !ok || got != ti {
			t.Errorf("Tensor(%q) does not return Tensors[%d]", ti.Name, i)
		}
		row, ok := ti.Type.RowSize(int(ti.Shape[0]))
		if !ok || uint64(row)*ti.Elements()/ti.Shape[0] != ti.Size {
			t.Errorf("tensor %q: size %d inconsistent with %s %v", ti.Name, ti.Size, ti.Type, ti.Shape)
		}
		if f.data != nil {
			b, err := f.TensorData(ti)
			if err != nil || uint64(len(b)) != ti.Size {
				t.Errorf("TensorData(%q): %d bytes, %v", ti.Name, len(b), err)
			}
		}
	}
}

// eachRealFile runs f as a subtest per real GGUF file, opened (mapped).
func eachRealFile(t *testing.T, f func(t *testing.T, path string, file *File)) {
	for _, path := range realFiles(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			file, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer file.Close()
			f(t, path, file)
		})
	}
}

func TestRealFiles(t *testing.T) {
	eachRealFile(t, func(t *testing.T, path string, f *File) {
		checkInvariants(t, f)
		if f.Architecture() == "" {
			t.Errorf("no general.architecture")
		}
		toks, ok := f.Strings("tokenizer.ggml.tokens")
		if !ok || len(toks) == 0 {
			t.Fatalf("no tokenizer.ggml.tokens")
		}
		if scores, ok := f.Float32s("tokenizer.ggml.scores"); ok && len(scores) != len(toks) {
			t.Errorf("%d scores for %d tokens", len(scores), len(toks))
		}
		if types, ok := f.Int32s("tokenizer.ggml.token_type"); ok && len(types) != len(toks) {
			t.Errorf("%d token types for %d tokens", len(types), len(toks))
		}
		if _, ok := f.String("tokenizer.ggml.model"); !ok {
			t.Errorf("no tokenizer.ggml.model")
		}
	})
}

// TestRealVocabSizes pins a few values stated in the test data README.
func TestRealVocabSizes(t *testing.T) {
	dir := testdata.Dir(t)
	for _, c := range []struct {
		file, arch string
		tokens     int
	}{
		{"vocab/ggml-vocab-llama3.gguf", "llama", 128256},
		{"vocab/ggml-vocab-qwen3.gguf", "qwen2", 151936},
		{"models/stories260K.gguf", "llama", 512},
		{"models/llama-2-tiny-random.gguf", "llama", 32000},
	} {
		f, err := Open(filepath.Join(dir, c.file))
		if err != nil {
			t.Fatal(err)
		}
		toks, _ := f.Strings("tokenizer.ggml.tokens")
		if f.Architecture() != c.arch || len(toks) != c.tokens {
			t.Errorf("%s: arch %q, %d tokens; want %q, %d", c.file, f.Architecture(), len(toks), c.arch, c.tokens)
		}
		if strings.HasSuffix(c.file, "stories260K.gguf") {
			if n, ok := f.Uint("llama.block_count"); !ok || n != 5 {
				t.Errorf("stories260K block_count %d %v, want 5", n, ok)
			}
			if n, ok := f.Uint("llama.embedding_length"); !ok || n != 64 {
				t.Errorf("stories260K embedding_length %d %v, want 64", n, ok)
			}
			if toks[0] != "<unk>" || toks[1] != "<s>" || toks[2] != "</s>" {
				t.Errorf("stories260K first tokens %q", toks[:3])
			}
		}
		f.Close()
	}
}

type manifest struct {
	Shapes map[string][]uint64 `json:"tensor_shapes_ne"`
	Models []struct {
		File     string            `json:"file"`
		Size     int64             `json:"size"`
		FileType int               `json:"general.file_type"`
		Types    map[string]string `json:"tensor_types"`
	} `json:"models"`
}

var blkRE = regexp.MustCompile(`^blk\.\d+\.`)

func TestQuantZooManifest(t *testing.T) {
	dir := filepath.Join(testdata.Dir(t), "quantzoo")
	raw, err := os.ReadFile(filepath.Join(dir, "MANIFEST.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	if len(m.Models) != 16 {
		t.Fatalf("manifest lists %d models, want 16", len(m.Models))
	}
	for _, mm := range m.Models {
		t.Run(mm.File, func(t *testing.T) {
			f, err := Open(filepath.Join(dir, mm.File))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if f.Size() != mm.Size {
				t.Errorf("size %d, manifest %d", f.Size(), mm.Size)
			}
			if ft, ok := f.Uint("general.file_type"); !ok || int(ft) != mm.FileType {
				t.Errorf("general.file_type %d %v, manifest %d", ft, ok, mm.FileType)
			}
			if len(f.Tensors) != len(mm.Types) {
				t.Errorf("%d tensors, manifest %d", len(f.Tensors), len(mm.Types))
			}
			for name, typ := range mm.Types {
				ti, ok := f.Tensor(name)
				if !ok {
					t.Errorf("tensor %q missing", name)
					continue
				}
				want, err := quant.ParseType(typ)
				if err != nil {
					t.Fatal(err)
				}
				if ti.Type != want {
					t.Errorf("tensor %q: type %s, manifest %s", name, ti.Type, want)
				}
				shape, ok := m.Shapes[blkRE.ReplaceAllString(name, "blk.N.")]
				if !ok {
					t.Errorf("tensor %q: no shape in manifest", name)
				} else if !slices.Equal(ti.Shape, shape) {
					t.Errorf("tensor %q: shape %v, manifest %v", name, ti.Shape, shape)
				}
			}
		})
	}
}

// TestMmapMatchesRead checks that the mapped, read-into-memory, in-memory
// and header-only paths agree on every file.
func TestMmapMatchesRead(t *testing.T) {
	eachRealFile(t, func(t *testing.T, path string, mf *File) {
		disableMmap = true
		rf, err := Open(path)
		disableMmap = false
		if err != nil {
			t.Fatal(err)
		}
		defer rf.Close()
		if rf.Mapped() {
			t.Fatal("read path is mapped")
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		pf, err := Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		hf, err := OpenReader(bytes.NewReader(raw), int64(len(raw)))
		if err != nil {
			t.Fatal(err)
		}
		for name, g := range map[string]*File{"read": rf, "parse": pf, "reader": hf} {
			sameHeader(t, name, mf, g)
		}
		for i := range mf.Tensors {
			a, err1 := mf.TensorData(&mf.Tensors[i])
			b, err2 := rf.TensorData(&rf.Tensors[i])
			if err1 != nil || err2 != nil || !bytes.Equal(a, b) {
				t.Fatalf("tensor %q: data differs (%v, %v)", mf.Tensors[i].Name, err1, err2)
			}
		}
	})
}

func sameHeader(t *testing.T, name string, a, b *File) {
	t.Helper()
	if a.Version != b.Version || a.Alignment != b.Alignment || a.DataOffset != b.DataOffset || a.Size() != b.Size() {
		t.Errorf("%s: header fields differ", name)
	}
	if !reflect.DeepEqual(a.KV, b.KV) {
		t.Errorf("%s: metadata differs", name)
	}
	if !reflect.DeepEqual(a.Tensors, b.Tensors) {
		t.Errorf("%s: tensor infos differ", name)
	}
}
