package engine

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/churon/churon/engine/sample"
	"github.com/churon/churon/internal/testdata"
)

// reference is the part of a llama.cpp reference file the tests read.
type reference struct {
	Model        string  `json:"model"`
	KVCacheType  string  `json:"kv_cache_type"`
	Prompt       string  `json:"prompt"`
	AddBOS       bool    `json:"add_bos"`
	PromptIDs    []int32 `json:"prompt_ids"`
	GeneratedIDs []int32 `json:"generated_ids"`
	// GeneratedGaps is, for each generated token after the first, the gap
	// between llama.cpp's top two logits at the step that chose it
	// (tools/llamacpp-bench/logits.mjs --greedy).
	GeneratedGaps []float64   `json:"generated_gaps"`
	Logits        [][]float32 `json:"full_logits_prompt"`
	PromptTop     [][][]any   `json:"prompt_top"`
}

func readReference(t *testing.T, path string) reference {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var r reference
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return r
}

func kvType(t *testing.T, s string) KVType {
	switch s {
	case "f16":
		return KVF16
	case "f32":
		return KVF32
	}
	t.Fatalf("reference kv_cache_type %q", s)
	return 0
}

func loadModel(t *testing.T, path string) *Model {
	t.Helper()
	m, err := Load(context.Background(), path, LoadOptions{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

// feedReference feeds ref's prompt to a new sequence of m with ref's KV
// cache type and returns every position's logits.
func feedReference(t *testing.T, m *Model, ref reference) []float32 {
	t.Helper()
	seq, err := m.NewSequence(SequenceOptions{KVType: kvType(t, ref.KVCacheType)})
	if err != nil {
		t.Fatal(err)
	}
	logits, err := seq.FeedAll(context.Background(), ref.PromptIDs)
	if err != nil {
		t.Fatal(err)
	}
	return logits
}

// cosine similarity and max |a-b| of two rows.
func compareRows(a, b []float32) (cos, maxDiff float64) {
	var dot, na, nb float64
	for i := range a {
		x, y := float64(a[i]), float64(b[i])
		dot += x * y
		na += x * x
		nb += y * y
		maxDiff = math.Max(maxDiff, math.Abs(x-y))
	}
	return dot / math.Sqrt(na*nb), maxDiff
}

func argmax(row []float32) int {
	best := 0
	for i, v := range row {
		if v > row[best] {
			best = i
		}
	}
	return best
}

// TestReferenceGreedy checks the engine against llama.cpp's greedy runs of
// stories260K and llama-2-tiny-random: same prompt ids, same generated
// ids, close logits.
func TestReferenceGreedy(t *testing.T) {
	dir := testdata.Dir(t)
	files, _ := filepath.Glob(filepath.Join(dir, "reference", "*_greedy_*.json"))
	if len(files) < 7 {
		t.Fatalf("found %d greedy references in %s, want 7", len(files), dir)
	}
	models := map[string]*Model{}
	for _, file := range files {
		ref := readReference(t, file)
		m := models[ref.Model]
		if m == nil {
			m = loadModel(t, filepath.Join(dir, ref.Model))
			models[ref.Model] = m
		}
		t.Run(strings.TrimSuffix(filepath.Base(file), ".json"), func(t *testing.T) {
			ids := m.TokenizePrompt(ref.Prompt, ref.AddBOS, false)
			if !slices.Equal(ids, ref.PromptIDs) {
				t.Fatalf("prompt ids %v, llama.cpp %v", ids, ref.PromptIDs)
			}
			seq, err := m.NewSequence(SequenceOptions{KVType: kvType(t, ref.KVCacheType)})
			if err != nil {
				t.Fatal(err)
			}
			logits, err := seq.FeedAll(context.Background(), ids)
			if err != nil {
				t.Fatal(err)
			}
			vocab := m.Info().VocabSize
			for r, want := range ref.Logits {
				cos, diff := compareRows(logits[r*vocab:(r+1)*vocab], want)
				if cos < 0.99999 || diff > 0.05 {
					t.Errorf("prompt row %d: cosine %.7f, max diff %.4f", r, cos, diff)
				}
			}
			if err := seq.Truncate(0); err != nil {
				t.Fatal(err)
			}
			res, err := seq.Generate(context.Background(), ids, GenerateOptions{
				MaxTokens: len(ref.GeneratedIDs), IgnoreEOS: true, Sampling: sample.Greedy(),
			}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(res.Tokens, ref.GeneratedIDs) {
				t.Errorf("generated\n got %v\nwant %v", res.Tokens, ref.GeneratedIDs)
			}
		})
	}
}

// TestQuantZooLogits runs every quantzoo model over the reference prompt
// and compares every position's logits with llama.cpp's, for both KV
// cache types.
func TestQuantZooLogits(t *testing.T) {
	dir := testdata.Dir(t)
	files, _ := filepath.Glob(filepath.Join(dir, "quantzoo", "zoo-*.ref*.json"))
	if len(files) == 0 {
		t.Fatalf("no quantzoo references in %s", dir)
	}
	for _, file := range files {
		base := filepath.Base(file)
		name := base[:strings.Index(base, ".ref")]
		typ := strings.TrimPrefix(name, "zoo-")
		t.Run(strings.TrimSuffix(base, ".json"), func(t *testing.T) {
			ref := readReference(t, file)
			m := loadModel(t, filepath.Join(dir, "quantzoo", name+".gguf"))
			logits := feedReference(t, m, ref)
			minCos := 0.999
			switch {
			case typ == "F32" || typ == "F16" || typ == "BF16":
				minCos = 0.9999
			case typ == "Q8_0" && ref.KVCacheType == "f32":
				minCos = 0.9999
			case typ == "Q8_0":
				// Measured 0.99986: identical to llama.cpp on the first nine
				// positions, then one 8-bit activation rounding flips. llama.cpp's
				// own F16-KV and F32-KV runs of this model agree only to 0.9997,
				// so this is the noise floor of re-rounding, not an error.
				minCos = 0.9998
			}
			vocab := m.Info().VocabSize
			worst := 1.0
			for r, want := range ref.Logits {
				got := logits[r*vocab : (r+1)*vocab]
				cos, _ := compareRows(got, want)
				worst = math.Min(worst, cos)
				if cos < minCos {
					t.Errorf("row %d: cosine %.6f < %.4f", r, cos, minCos)
				}
				// Random weights leave many near ties: demand the same argmax
				// only where llama.cpp's top two are clearly apart.
				if gap := topGap(ref.PromptTop[r]); gap > 0.05 {
					if a := argmax(got); a != argmax(want) {
						t.Errorf("row %d: argmax %d, llama.cpp %d (gap %.3f)", r, a, argmax(want), gap)
					}
				}
			}
			t.Logf("%s: worst cosine %.7f over %d rows", base, worst, len(ref.Logits))
		})
	}
}

func topGap(top [][]any) float64 {
	if len(top) < 2 {
		return math.Inf(1)
	}
	a, _ := top[0][1].(float64)
	b, _ := top[1][1].(float64)
	return a - b
}
