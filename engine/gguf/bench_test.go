package gguf

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/churon/churon/internal/testdata"
)

// largestVocab returns the biggest vocab-only GGUF: its metadata parse is
// what a model load pays for a large vocabulary.
func largestVocab(b *testing.B) string {
	files, _ := filepath.Glob(filepath.Join(testdata.Dir(b), "vocab", "*.gguf"))
	best, size := "", int64(0)
	for _, f := range files {
		if st, err := os.Stat(f); err == nil && st.Size() > size {
			best, size = f, st.Size()
		}
	}
	if best == "" {
		b.Skip("SKIP: no vocab GGUF in the shared testdata")
	}
	return best
}

func BenchmarkOpen(b *testing.B) {
	path := largestVocab(b)
	st, _ := os.Stat(path)
	b.SetBytes(st.Size())
	b.ReportAllocs()
	for b.Loop() {
		f, err := Open(path)
		if err != nil {
			b.Fatal(err)
		}
		f.Close()
	}
}

func BenchmarkParse(b *testing.B) {
	benchFromMemory(b, func(data []byte) error {
		_, err := Parse(data)
		return err
	})
}

func BenchmarkOpenReader(b *testing.B) {
	benchFromMemory(b, func(data []byte) error {
		_, err := OpenReader(bytes.NewReader(data), int64(len(data)))
		return err
	})
}

// benchFromMemory times open on the largest vocabulary's bytes, read
// into memory once.
func benchFromMemory(b *testing.B, open func(data []byte) error) {
	data, err := os.ReadFile(largestVocab(b))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if err := open(data); err != nil {
			b.Fatal(err)
		}
	}
}
