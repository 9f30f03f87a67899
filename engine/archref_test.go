package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/churon/churon/engine/sample"
	"github.com/churon/churon/models/synth"
)

// archCase is one entry of testdata/archref/manifest.json, written by
// tools/archref with llama.cpp's logits beside it.
type archCase struct {
	Name        string  `json:"name"`
	Shape       string  `json:"shape"`
	Type        string  `json:"type"`
	Seed        uint64  `json:"seed"`
	IDs         []int32 `json:"ids"`
	KV          string  `json:"kv"`
	SHA256      string  `json:"sha256"`
	ExpertFlips int     `json:"expert_flips"`
	MinCosine   float64 `json:"min_cosine"`
	Live        bool    `json:"live"`
	Layers      int     `json:"layers"`
	Window      int     `json:"window"`
	SWAPattern  int     `json:"swa_pattern"`
	Greedy      int     `json:"greedy"`
}

// TestArchReferences is the one check of the architectures against
// llama.cpp v0.5.0: every position's logits of the synthetic models
// tools/archref recorded (qwen3moe in two shapes, one of odd sizes; a
// llama file with experts; a llama file with every optional bias and
// scale; gpt-oss; gemma3 in two shapes and both KV cache types). The
// models are generated here from the same synth presets; a model whose
// bytes differ from the recorded one means synth changed and the
// references must be recorded again.
//
// The live cases (Gemma 3 1B's real width) run only with
// CHURON_LLAMACPP_LIVE=1 and node-llama-cpp installed: the test then has
// tools/archref record them into a temporary directory, model and
// logits, and compares those. It takes minutes.
func TestArchReferences(t *testing.T) {
	dir := filepath.Join("testdata", "archref")
	data, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cases []archCase
	if err := json.Unmarshal(data, &cases); err != nil {
		t.Fatal(err)
	}
	if len(cases) == 0 {
		t.Fatal("no cases in the manifest")
	}
	tmp := t.TempDir()
	liveDir := ""
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			refDir, path := dir, filepath.Join(tmp, c.Name+".gguf")
			if c.Live {
				if liveDir == "" {
					liveDir = recordLive(t, filepath.Join(tmp, "live"))
				}
				refDir, path = liveDir, filepath.Join(liveDir, c.Name+".gguf")
			} else if err := writeArchModel(c, path); err != nil {
				t.Fatal(err)
			}
			ref := readReference(t, filepath.Join(refDir, c.Name+".json"))
			m := loadModel(t, path)
			logits := feedReference(t, m, ref)
			if len(ref.Logits) != len(c.IDs) || !slices.Equal(ref.PromptIDs, c.IDs) {
				t.Fatalf("reference has %d rows for ids %v, the manifest %v", len(ref.Logits), ref.PromptIDs, c.IDs)
			}
			worst := compareReference(t, ref, logits, m.Info().VocabSize, c.minCosine(), c.ExpertFlips)
			t.Logf("%s: worst cosine %.7f over %d rows", c.Name, worst, len(ref.Logits))
			if c.Greedy > 0 {
				compareGreedy(t, m, ref, c.KV)
			}
		})
	}
}

// minCosine is the bar every row's cosine must reach: the case's own
// where the manifest gives one (a file whose logits move further with
// the order of the sums alone, measured as llama.cpp's spread across its
// CPU variants; see tools/archref's gemma3TinyQ8Spread), else F16 and
// Q8_0 weights round the way llama.cpp's do, and 4-bit types and MXFP4
// leave more to the order of the sums.
func (c archCase) minCosine() float64 {
	if c.MinCosine > 0 {
		return c.MinCosine
	}
	switch strings.ToUpper(c.Type) {
	case "F32", "F16", "BF16", "Q8_0":
		return 0.9999
	}
	return 0.999
}

// compareReference checks every row of logits (rows of vocab) against
// llama.cpp's: cosine ≥ minCos, and llama.cpp's argmax wherever its top
// two are more than 0.05 apart (random weights leave many near ties).
// flips rows may fall as low as 0.99: a quantized model may route one
// token to another expert than llama.cpp does where two experts'
// probabilities are within 1e-5 (seen in qwen3moe-test Q4_0 row 17,
// layer 0), one step of 8-bit activation rounding deciding; each is
// logged. It returns the worst cosine.
func compareReference(t *testing.T, ref reference, logits []float32, vocab int, minCos float64, flips int) float64 {
	t.Helper()
	worst := 1.0
	for r, want := range ref.Logits {
		got := logits[r*vocab : (r+1)*vocab]
		cos, _ := compareRows(got, want)
		worst = math.Min(worst, cos)
		if cos < minCos && cos >= 0.99 && flips > 0 {
			flips--
			t.Logf("row %d: cosine %.6f < %.4f, taken as a routing near-tie", r, cos, minCos)
		} else if cos < minCos {
			t.Errorf("row %d: cosine %.6f < %.4f", r, cos, minCos)
		}
		if gap := topGap(ref.PromptTop[r]); gap > 0.05 {
			if a := argmax(got); a != argmax(want) {
				t.Errorf("row %d: argmax %d, llama.cpp %d (gap %.3f)", r, a, argmax(want), gap)
			}
		}
	}
	return worst
}

// compareGreedy decodes greedily after ref's prompt, as many tokens as
// llama.cpp did, and checks they are llama.cpp's until the first that
// differs at a near tie: a step whose top two logits were within 0.05
// there may go either way, and the rest then differs.
func compareGreedy(t *testing.T, m *Model, ref reference, kv string) {
	t.Helper()
	if len(ref.GeneratedIDs) == 0 || len(ref.GeneratedGaps) != len(ref.GeneratedIDs) {
		t.Fatalf("reference has %d generated tokens and %d gaps", len(ref.GeneratedIDs), len(ref.GeneratedGaps))
	}
	seq, err := m.NewSequence(SequenceOptions{KVType: kvType(t, kv)})
	if err != nil {
		t.Fatal(err)
	}
	res, err := seq.Generate(context.Background(), ref.PromptIDs, GenerateOptions{
		MaxTokens: len(ref.GeneratedIDs), IgnoreEOS: true, Sampling: sample.Greedy(),
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Tokens) != len(ref.GeneratedIDs) {
		t.Fatalf("generated %d tokens, llama.cpp %d", len(res.Tokens), len(ref.GeneratedIDs))
	}
	n := 0
	for ; n < len(res.Tokens) && res.Tokens[n] == ref.GeneratedIDs[n]; n++ {
	}
	if n < len(res.Tokens) {
		// Token i was chosen at a gap of topGap(the prompt's last row) for
		// i = 0, GeneratedGaps[i-1] after.
		gap := topGap(ref.PromptTop[len(ref.PromptTop)-1])
		if n > 0 {
			gap = ref.GeneratedGaps[n-1]
		}
		if gap > 0.05 {
			t.Errorf("greedy token %d: %d, llama.cpp %d (its gap %.3f)\n got %v\nwant %v", n, res.Tokens[n], ref.GeneratedIDs[n], gap, res.Tokens, ref.GeneratedIDs)
		}
	}
	t.Logf("greedy: %d of %d tokens equal (then a near tie)", n, len(ref.GeneratedIDs))
}

// writeArchModel writes the case's model and checks it is the one
// llama.cpp ran.
func writeArchModel(c archCase, path string) error {
	if c.Layers+c.Window+c.SWAPattern > 0 {
		return errors.New("a cut preset is only run from the model tools/archref wrote (a live case)")
	}
	ft, err := synth.ParseFileType(c.Type)
	if err != nil {
		return err
	}
	s, err := synth.Preset(c.Shape, ft, c.Seed)
	if err == nil {
		err = synth.Write(path, s)
	}
	if err != nil {
		return err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != c.SHA256 {
		return fmt.Errorf("synth made another model than the one llama.cpp ran (sha256 %x, recorded %s): record again with go run ./tools/archref", sum, c.SHA256)
	}
	return nil
}

// recordLive has tools/archref record the live cases, models kept, into
// out, or skips.
func recordLive(t *testing.T, out string) string {
	t.Helper()
	if os.Getenv("CHURON_LLAMACPP_LIVE") == "" {
		t.Skip("SKIP: set CHURON_LLAMACPP_LIVE=1 to run llama.cpp (node, node-llama-cpp) on the live cases")
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("SKIP: no node")
	}
	out, err := filepath.Abs(out)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "run", "./tools/archref", "-live", "-keep", "-out", out)
	cmd.Dir = ".."
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("tools/archref -live: %v\n%s", err, b)
	}
	return out
}
