package compare

import (
	"context"
	api "github.com/churon/churon/app/api/compare"
	"os"
	"path/filepath"
	"testing"
)

func TestQuantizedName(t *testing.T) {
	for _, c := range []struct{ in, typ, want string }{
		{"/m/qwen2.5-0.5b-instruct-f16.gguf", "Q4_K_M", "/m/qwen2.5-0.5b-instruct-Q4_K_M.gguf"},
		{"/m/model.Q8_0.gguf", "Q4_0", "/m/model.Q4_0.gguf"},
		{"/m/llama_BF16.gguf", "Q8_0", "/m/llama_Q8_0.gguf"},
		{"/m/plain.gguf", "Q6_K", "/m/plain-Q6_K.gguf"},
		{"/m/Q8_0.gguf", "Q4_0", "/m/Q8_0-Q4_0.gguf"}, // nothing before the type: keep it
	} {
		if got := QuantizedName(c.in, c.typ); got != c.want {
			t.Errorf("QuantizedName(%q, %q) = %q, want %q", c.in, c.typ, got, c.want)
		}
	}
}

// TestQuantizeThenCompare is the Compare page's "make a Q8_0 of this
// model" path: the copy it makes is a model the comparison accepts, close
// to its source.
func TestQuantizeThenCompare(t *testing.T) {
	src := tinyModel(t, "F16", 320, false)
	out := filepath.Join(t.TempDir(), "tiny-Q8_0.gguf")
	var last int64
	rep, err := Quantize(context.Background(), src, out, api.QuantizeOptions{Type: "Q8_0", Progress: func(done, total int64) {
		if done < last || done > total {
			t.Errorf("progress %d/%d after %d", done, total, last)
		}
		last = done
	}})
	if err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(out); err != nil || st.Size() != rep.OutBytes || rep.BitsPerWeight < 8 || rep.BitsPerWeight > 9 {
		t.Fatalf("report %+v, stat %v", rep, err)
	}
	res, err := Run(context.Background(), api.Options{Models: []string{src, out}, Prompt: "Hello", Sampling: greedy(8), TextTokens: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	q := res.Models[1].Quality.Summary
	if q.KLDMean <= 0 || q.KLDMean > 0.01 {
		t.Errorf("Q8_0 copy KLD mean %g, want small and positive", q.KLDMean)
	}

	if _, err := Quantize(context.Background(), out, out+"-again.gguf", api.QuantizeOptions{Type: "Q4_0"}); !IsRequantize(err) {
		t.Errorf("requantizing a Q8_0 file: %v, want a requantize refusal", err)
	}
}
