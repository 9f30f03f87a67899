package compare

import (
	"context"
	"errors"
	"strings"
	"testing"

	api "github.com/churon/churon/app/api/compare"
	"github.com/churon/churon/internal/testdata"
)

// TestQuantzooOrdering compares llama.cpp's own quantizations of one model
// (the shared quantzoo): fewer bits must cost more, in KLD and in top-1
// agreement, against the F32 original picked as reference by itself.
func TestQuantzooOrdering(t *testing.T) {
	var models []string
	for _, f := range []string{"zoo-Q2_K.gguf", "zoo-Q8_0.gguf", "zoo-F32.gguf", "zoo-Q4_K.gguf"} {
		models = append(models, testdata.Path(t, "quantzoo", f))
	}
	res, err := Run(context.Background(), api.Options{Models: models, Prompt: "Once upon a time", Raw: true,
		Sampling: greedy(32), TextTokens: 96, Threads: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Reference != 2 || res.Template != "raw" {
		t.Fatalf("reference %d (%s), template %q", res.Reference, res.Models[res.Reference].Type, res.Template)
	}
	q2, q8, q4 := res.Models[0].Quality, res.Models[1].Quality, res.Models[3].Quality
	for _, m := range res.Models {
		t.Logf("%-6s %5.2f bpw: KLD mean %.3g p99 %.3g, top-1 %.1f%%, ppl ratio %.4f", m.Type, m.BPW,
			m.Quality.KLDMean, m.Quality.KLDP99, 100*m.Quality.Top1Agreement, m.Quality.PPLRatio)
	}
	if !(0 < q8.KLDMean && q8.KLDMean < q4.KLDMean && q4.KLDMean < q2.KLDMean) {
		t.Errorf("KLD not ordered by bits: Q8_0 %g, Q4_K %g, Q2_K %g", q8.KLDMean, q4.KLDMean, q2.KLDMean)
	}
	if !(q8.Top1Agreement >= q4.Top1Agreement && q4.Top1Agreement >= q2.Top1Agreement && q2.Top1Agreement < 1) {
		t.Errorf("agreement not ordered by bits: Q8_0 %g, Q4_K %g, Q2_K %g", q8.Top1Agreement, q4.Top1Agreement, q2.Top1Agreement)
	}
}

// TestVocabSameSizeOtherTokens: a vocabulary of the same size with other
// tokens is refused too, naming the first token that differs.
func TestVocabSameSizeOtherTokens(t *testing.T) {
	stories := testdata.Stories260K(t)
	other := tinyModel(t, "F16", 512, false)
	a, err := ProbeFile(stories)
	if err != nil {
		t.Fatal(err)
	}
	b, err := ProbeFile(other)
	if err != nil {
		t.Fatal(err)
	}
	if a.VocabSize != 512 || b.VocabSize != 512 {
		t.Fatalf("vocabulary sizes %d, %d", a.VocabSize, b.VocabSize)
	}
	var ve *api.VocabError
	if err := CheckVocabs([]api.Probe{a, b}); !errors.As(err, &ve) || !strings.HasPrefix(ve.Detail, "token ") {
		t.Fatalf("err = %v", err)
	}
	if err := CheckVocabs([]api.Probe{a, a}); err != nil {
		t.Errorf("same file: %v", err)
	}
}
