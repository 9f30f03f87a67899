package quantize

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkFile quantizes the zoo's F32 model (1.4M weights); the
// throughput is in source bytes per second.
func BenchmarkFile(b *testing.B) {
	src := zooPath(b, "F32")
	st, err := os.Stat(src)
	if err != nil {
		b.Fatal(err)
	}
	for _, typ := range []string{"Q8_0", "Q4_0", "Q4_K_M", "Q6_K"} {
		b.Run(typ, func(b *testing.B) {
			out := filepath.Join(b.TempDir(), "out.gguf")
			b.SetBytes(st.Size())
			for b.Loop() {
				if _, err := File(context.Background(), src, out, Options{Type: typ, Threads: 1}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
