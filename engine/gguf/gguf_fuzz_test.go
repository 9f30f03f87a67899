package gguf

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/churon/churon/engine/quant"
	"github.com/churon/churon/internal/testdata"
)

// FuzzParse feeds arbitrary bytes to the reader. It must never panic or
// allocate absurdly; failures must be one-line *FormatErrors; successes
// must satisfy the invariants, agree with OpenReader, and survive a
// rewrite through the Writer unchanged.
func FuzzParse(f *testing.F) {
	for _, align := range []uint32{0, 1, 64} {
		f.Add(buildFile(f, align, nil))
		f.Add(buildFile(f, align, someTensors()[:3]))
	}
	f.Add(gguf(3, 2, 1).kv("general.alignment", 32).tensor("a", quant.Q4_0, 0, 32, 2).tensor("b", quant.F16, 64, 3).data(96).b)
	f.Add(gguf(2, 0, 1).str("s").u32(uint32(TypeArray)).u32(uint32(TypeString)).u64(2).str("ab").str("").b)
	f.Add(gguf(3, 0, 1).str("n").u32(uint32(TypeArray)).u32(uint32(TypeArray)).u64(1).u32(uint32(TypeInt16)).u64(1).bytes(1, 2).b)
	if dir := fuzzTestdata(); dir != "" {
		if b, err := os.ReadFile(filepath.Join(dir, "models", "stories260K.gguf")); err == nil {
			// The whole header (tokens, scores, types), cut short of the data.
			if p, err := Parse(b); err == nil {
				f.Add(b[:p.HeaderSize()+64])
			}
			f.Add(b[:3000])
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Parse(data)
		_, rerr := OpenReader(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			s := err.Error()
			var fe *FormatError
			if !errors.As(err, &fe) || strings.ContainsAny(s, "\n\r") || !strings.HasPrefix(s, "gguf: ") {
				t.Fatalf("bad error %q (%T)", s, err)
			}
			if rerr == nil || rerr.Error() != s {
				t.Fatalf("Parse: %v; OpenReader: %v", err, rerr)
			}
			return
		}
		if rerr != nil {
			t.Fatalf("Parse succeeded, OpenReader: %v", rerr)
		}
		checkInvariants(t, p)
		w1 := rewrite(t, p)
		if w1 == nil {
			return
		}
		p2, err := Parse(w1)
		if err != nil {
			t.Fatalf("rewritten file does not parse: %v", err)
		}
		if len(p2.KV) != len(p.KV) || len(p2.Tensors) != len(p.Tensors) {
			t.Fatalf("rewrite changed counts")
		}
		for i := range p.Tensors {
			a, _ := p.TensorData(&p.Tensors[i])
			b, _ := p2.TensorData(&p2.Tensors[i])
			if !bytes.Equal(a, b) || !reflect.DeepEqual(p.Tensors[i].Shape, p2.Tensors[i].Shape) {
				t.Fatalf("tensor %q changed in rewrite", p.Tensors[i].Name)
			}
		}
		if w2 := rewrite(t, p2); !bytes.Equal(w1, w2) {
			t.Fatalf("writing is not idempotent")
		}
	})
}

// rewrite copies a parsed file through the Writer; nil when the file holds
// something the Writer refuses on purpose (llama.cpp-incompatible names).
func rewrite(t *testing.T, f *File) []byte {
	w := NewWriter()
	for _, kv := range f.KV {
		if err := w.SetKV(kv.Key, kv.Value); err != nil {
			t.Fatalf("SetKV(%q) of a parsed value: %v", kv.Key, err)
		}
	}
	for i := range f.Tensors {
		ti := &f.Tensors[i]
		if len(ti.Name) > MaxTensorNameLen {
			return nil
		}
		b, err := f.TensorData(ti)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.AddTensor(ti.Name, ti.Type, ti.Shape, b); err != nil {
			t.Fatalf("AddTensor of a parsed tensor: %v", err)
		}
	}
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// fuzzTestdata finds the shared test data without skipping: the fuzz
// target runs (with fewer seeds) when it is absent.
func fuzzTestdata() string {
	if d := os.Getenv(testdata.EnvVar); d != "" {
		return d
	}
	for _, d := range []string{"../../../shared/testdata", "../../shared/testdata"} {
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			return d
		}
	}
	return ""
}
