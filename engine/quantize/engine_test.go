package quantize

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/churon/churon/engine"
	"github.com/churon/churon/engine/sample"
	"github.com/churon/churon/internal/testdata"
)

// TestLoadAndGenerate: a model quantized here loads in the engine,
// generates, and its logits after the zoo's prompt agree with llama.cpp's
// run of its own file of that type.
func TestLoadAndGenerate(t *testing.T) {
	dir := testdata.Dir(t)
	for _, tc := range []struct{ typ, ref string }{{"Q4_K_M", "Q4_K_M-mixed"}, {"Q8_0", "Q8_0"}} {
		t.Run(tc.typ, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join(dir, "quantzoo", "zoo-"+tc.ref+".ref-kvf32.json"))
			if err != nil {
				t.Fatal(err)
			}
			var ref struct {
				PromptIDs []int32   `json:"prompt_ids"`
				Last      []float64 `json:"full_logits_last_prompt_pos"`
			}
			if err := json.Unmarshal(raw, &ref); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(t.TempDir(), "m.gguf")
			pure := tc.typ == "Q8_0" // the zoo's Q8_0 file was made with --pure
			if _, err := File(context.Background(), filepath.Join(dir, "quantzoo", "zoo-F32.gguf"), out, Options{Type: tc.typ, Pure: pure}); err != nil {
				t.Fatal(err)
			}
			m, err := engine.Load(context.Background(), out, engine.LoadOptions{Threads: 1})
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			if got := m.Info().FileType; got != tc.typ {
				t.Errorf("engine sees file type %q", got)
			}
			seq, err := m.NewSequence(engine.SequenceOptions{KVType: engine.KVF32})
			if err != nil {
				t.Fatal(err)
			}
			if err := seq.Feed(context.Background(), ref.PromptIDs); err != nil {
				t.Fatal(err)
			}
			var dot, na, nb float64
			for i, v := range seq.Logits() {
				dot += float64(v) * ref.Last[i]
				na += float64(v) * float64(v)
				nb += ref.Last[i] * ref.Last[i]
			}
			cos := dot / math.Sqrt(na*nb)
			t.Logf("%s: cosine similarity of the last prompt position's logits to llama.cpp's: %.6f", tc.typ, cos)
			if !(cos >= 0.999) {
				t.Errorf("cosine similarity %.6f to llama.cpp's logits", cos)
			}
			res, err := seq.Generate(context.Background(), nil, engine.GenerateOptions{MaxTokens: 8, IgnoreEOS: true, Sampling: sample.Greedy()}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Tokens) != 8 {
				t.Errorf("generated %d tokens (%s), want 8", len(res.Tokens), res.Finish)
			}
		})
	}
}
