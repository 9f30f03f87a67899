package cli

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/churon/churon/app/paths"
	"github.com/churon/churon/models/synth"
)

// compareOut is the documented shape of `churon compare --json`, the part
// these tests read: declared here, not taken from app/compare, so that a
// renamed field fails the test.
type compareOut struct {
	PromptTokens []int32 `json:"prompt_tokens"`
	Reference    int     `json:"reference"`
	Texts        []struct {
		Name   string  `json:"name"`
		Tokens []int32 `json:"tokens"`
	} `json:"texts"`
	Models []struct {
		File      string  `json:"file"`
		LoadMs    float64 `json:"load_ms"`
		TTFTMs    float64 `json:"ttft_ms"`
		PromptTPS float64 `json:"prompt_tps"`
		GenTPS    float64 `json:"gen_tps"`
		FileBytes int64   `json:"file_bytes"`
		BPW       float64 `json:"bpw"`
		RSSBytes  int64   `json:"rss_bytes"`
		Output    string  `json:"output"`
		Tokens    []int32 `json:"tokens"`
		Quality   struct {
			KLDMean       float64 `json:"kld_mean"`
			KLDP99        float64 `json:"kld_p99"`
			Top1Agreement float64 `json:"top1_agreement"`
			PPLRatio      float64 `json:"ppl_ratio"`
			Tokens        int     `json:"tokens"`
			Answer        struct {
				KLD           []float64 `json:"kld"`
				Agree         []bool    `json:"agree"`
				KLDMean       float64   `json:"kld_mean"`
				Top1Agreement float64   `json:"top1_agreement"`
				PPLRatio      float64   `json:"ppl_ratio"`
			} `json:"answer"`
		} `json:"quality"`
	} `json:"models"`
}

// quantPair writes one tiny synthetic model as F16 and as Q4_0 (same seed:
// the same weights in two storage types).
func quantPair(t *testing.T) (f16, q4 string) {
	t.Helper()
	t.Setenv(paths.EnvHome, t.TempDir()) // the scratch file goes to the cache folder
	dir := t.TempDir()
	write := func(ft synth.FileType) string {
		s := compareSpec()
		s.FileType = ft
		return writeSynth(t, filepath.Join(dir, string(ft)+".gguf"), s)
	}
	return write("F16"), write("Q4_0")
}

// compareSpec is a tiny model wide enough for quantization to show.
func compareSpec() synth.Spec {
	s := synth.Tiny("llama")
	s.Embd, s.FF, s.Context = 128, 256, 512
	return s
}

func runCompareJSON(t *testing.T, args ...string) compareOut {
	t.Helper()
	var res compareOut
	runJSON(t, &res, append([]string{"compare", "--json", "-q"}, args...)...)
	return res
}

// logitsRows runs `churon logits --all` over ids.
func logitsRows(t *testing.T, model string, ids []int32) [][]float64 {
	t.Helper()
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = fmt.Sprint(id)
	}
	// In compare's chunks: where prompts run through tile kernels (AMX),
	// how they are split changes the last bits.
	// Read them as the float32s they are (a float32 printed shortest and
	// parsed as float64 is not the same number), then widen.
	var rows32 [][]float32
	runJSON(t, &rows32, "logits", "-m", model, "--tokens", strings.Join(s, ","), "--all", "--json", "-ub", "32")
	rows := make([][]float64, len(rows32))
	for i, r := range rows32 {
		rows[i] = make([]float64, len(r))
		for j, v := range r {
			rows[i][j] = float64(v)
		}
	}
	return rows
}

// logSoftmax in float64, written plainly.
func logSoftmax(x []float64) []float64 {
	m := slices.Max(x)
	var sum float64
	for _, v := range x {
		sum += math.Exp(v - m)
	}
	lse := m + math.Log(sum)
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = v - lse
	}
	return out
}

// argmax is the first index of the largest value.
func argmax(x []float64) int { return slices.Index(x, slices.Max(x)) }

// independent scores model rows against reference rows: per-row KLD,
// top-1 agreement and the negative log-likelihoods of the targets.
type independent struct {
	kld        []float64
	agree      []bool
	nllM, nllR []float64
}

func (in *independent) add(ref, mod []float64, target int32) {
	lr, lm := logSoftmax(ref), logSoftmax(mod)
	var kld float64
	for v := range lr {
		kld += math.Exp(lr[v]) * (lr[v] - lm[v])
	}
	in.kld = append(in.kld, kld)
	in.agree = append(in.agree, argmax(ref) == argmax(mod))
	in.nllM = append(in.nllM, -lm[target])
	in.nllR = append(in.nllR, -lr[target])
}

func (in *independent) summary() (kldMean, kldP99, agree, pplRatio float64) {
	n := float64(len(in.kld))
	var sm, sr float64
	for i, k := range in.kld {
		kldMean += k / n
		if in.agree[i] {
			agree += 1 / n
		}
		sm += in.nllM[i]
		sr += in.nllR[i]
	}
	s := append([]float64(nil), in.kld...)
	sort.Float64s(s)
	r := 0.99 * (n - 1)
	lo := int(r)
	hi := min(lo+1, len(s)-1)
	kldP99 = s[lo] + (r-float64(lo))*(s[hi]-s[lo])
	return kldMean, kldP99, agree, math.Exp(sm/n - sr/n)
}

func near(a, b, rel float64) bool {
	return math.Abs(a-b) <= rel*math.Max(math.Abs(a), math.Abs(b))+1e-12
}

// TestCompareAgreesWithLogits: `churon compare` of F16 against Q4_0 gives
// the KL divergence, top-1 agreement and perplexity ratio that an
// independent computation from `churon logits` gives for the same
// tokens, and a model compared with itself gives exactly 0, 100 % and 1.
func TestCompareAgreesWithLogits(t *testing.T) {
	f16, q4 := quantPair(t)
	res := runCompareJSON(t, "-m", q4, "-m", f16, "-p", "Tell me a story about the sea.", "-n", "20",
		"--temp", "0", "--ignore-eos", "--seed", "7", "--text-tokens", "40", "-t", "1")
	if res.Reference != 1 {
		t.Fatalf("reference %d, want the F16 model (1)", res.Reference)
	}
	ref, m := res.Models[1], res.Models[0]
	for _, mr := range res.Models {
		if mr.LoadMs <= 0 || mr.TTFTMs <= 0 || mr.PromptTPS <= 0 || mr.GenTPS <= 0 || mr.FileBytes <= 0 || mr.BPW <= 0 || mr.RSSBytes <= 0 || mr.Output == "" {
			t.Errorf("%s: figures missing: %+v", mr.File, mr)
		}
	}

	var ans, all independent
	// The answer: prompt + the reference's answer, fed in one go; row
	// P-1+j predicts answer token j.
	P, T := len(res.PromptTokens), len(ref.Tokens)
	ids := append(append([]int32(nil), res.PromptTokens...), ref.Tokens[:T-1]...)
	rowsR, rowsM := logitsRows(t, f16, ids), logitsRows(t, q4, ids)
	for j := range T {
		ans.add(rowsR[P-1+j], rowsM[P-1+j], ref.Tokens[j])
		all.add(rowsR[P-1+j], rowsM[P-1+j], ref.Tokens[j])
	}
	for _, tx := range res.Texts {
		ids := tx.Tokens[:len(tx.Tokens)-1]
		rowsR, rowsM := logitsRows(t, f16, ids), logitsRows(t, q4, ids)
		for j := range ids {
			all.add(rowsR[j], rowsM[j], tx.Tokens[j+1])
		}
	}
	if len(res.Texts) != 2 || m.Quality.Tokens != len(all.kld) {
		t.Fatalf("%d texts, %d positions scored; independently %d", len(res.Texts), m.Quality.Tokens, len(all.kld))
	}
	const rel = 1e-9 // same float32 logits, same float64 formula: only rounding could differ
	a := m.Quality.Answer
	if len(a.KLD) != T {
		t.Fatalf("%d answer KLDs for %d tokens", len(a.KLD), T)
	}
	worst := 0.0
	for j := range T {
		if !near(a.KLD[j], ans.kld[j], rel) || a.Agree[j] != ans.agree[j] {
			t.Errorf("answer token %d: KLD %g agree %v; independently %g %v", j, a.KLD[j], a.Agree[j], ans.kld[j], ans.agree[j])
		}
		worst = math.Max(worst, math.Abs(a.KLD[j]-ans.kld[j])/ans.kld[j])
	}
	mean, _, agree, ratio := ans.summary()
	if !near(a.KLDMean, mean, rel) || !near(a.Top1Agreement, agree, 1e-12) || !near(a.PPLRatio, ratio, rel) {
		t.Errorf("answer: KLD %g top-1 %g ratio %g; independently %g %g %g", a.KLDMean, a.Top1Agreement, a.PPLRatio, mean, agree, ratio)
	}
	mean, p99, agree, ratio := all.summary()
	q := m.Quality
	if !near(q.KLDMean, mean, rel) || !near(q.KLDP99, p99, rel) || !near(q.Top1Agreement, agree, 1e-12) || !near(q.PPLRatio, ratio, rel) {
		t.Errorf("overall: KLD %g p99 %g top-1 %g ratio %g; independently %g %g %g %g",
			q.KLDMean, q.KLDP99, q.Top1Agreement, q.PPLRatio, mean, p99, agree, ratio)
	}
	t.Logf("Q4_0 vs F16 over %d tokens: KLD mean %.6g (p99 %.6g), top-1 %.1f%%, ppl ratio %.6f; worst per-token relative difference %.2g",
		q.Tokens, q.KLDMean, q.KLDP99, 100*q.Top1Agreement, q.PPLRatio, worst)
	if !(q.KLDMean > 0) || !(q.Top1Agreement < 1) {
		t.Errorf("Q4_0 is indistinguishable from F16: %+v", q)
	}

	self := runCompareJSON(t, "-m", f16, "-m", f16, "-p", "Tell me a story about the sea.", "-n", "20",
		"--temp", "0", "--ignore-eos", "--seed", "7", "--text-tokens", "40", "-t", "1")
	for _, mr := range self.Models {
		if sq := mr.Quality; sq.KLDMean != 0 || sq.KLDP99 != 0 || sq.Top1Agreement != 1 || sq.PPLRatio != 1 {
			t.Errorf("F16 against itself: %+v", sq)
		}
	}
}

func TestCompareCommand(t *testing.T) {
	f16, q4 := quantPair(t)
	home := t.TempDir()
	t.Setenv(paths.EnvHome, home)
	dir := t.TempDir()
	md, html := filepath.Join(dir, "r.md"), filepath.Join(dir, "r.html")
	out, errOut, code := run(t, "compare", "-m", f16, "-m", q4, "-p", "김치찌개 끓이는 법", "-n", "8", "--temp", "0",
		"--text-tokens", "24", "--save", "--md", md, "--html", html, "-t", "1")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"KLD mean", "PPL ratio", "Q4_0", "F16", "answer top-1", "ko KLD"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errOut, "saved as comparison 1") {
		t.Errorf("stderr: %s", errOut)
	}
	for _, p := range []string{md, html, filepath.Join(dir, "r.png")} {
		if st, err := os.Stat(p); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", p, err)
		}
	}
	list, _, code := run(t, "compare", "--list")
	if code != 0 || !strings.Contains(list, "김치찌개") {
		t.Errorf("list (exit %d): %q", code, list)
	}
	// Reopened, it is the same comparison.
	shown, errOut, code := run(t, "compare", "--show", "1")
	if code != 0 || shown != out {
		t.Errorf("--show 1 (exit %d, %s) differs:\n%s\nwas\n%s", code, errOut, shown, out)
	}

	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"compare", "-m", f16, "-p", "hi"}, 2, "2 to 4 models"},
		{[]string{"compare", "-m", f16, "-m", q4}, 2, "prompt is required"},
		{[]string{"compare", "-m", f16, "-m", filepath.Join(dir, "missing.gguf"), "-p", "hi"}, 1, "missing.gguf"},
		{[]string{"compare", "-m", f16, "-m", q4, "-p", "hi", "--ref", filepath.Join(dir, "other.gguf")}, 1, "reference must be one of the models"},
		{[]string{"compare", "--show", "99"}, 1, "not found"},
	} {
		_, errOut, code := run(t, c.args...)
		if code != c.code || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, %q; want %d and %q", c.args[1:], code, errOut, c.code, c.want)
		}
	}
}

func TestCompareRefusesOtherVocabulary(t *testing.T) {
	f16, _ := quantPair(t)
	s := compareSpec()
	s.Vocab = 384
	other := writeSynth(t, filepath.Join(t.TempDir(), "other.gguf"), s)
	_, errOut, code := run(t, "compare", "-m", f16, "-m", other, "-p", "hi", "-q")
	if code != 1 || !strings.Contains(errOut, "different vocabularies (320 tokens vs 384)") {
		t.Errorf("exit %d: %s", code, errOut)
	}
}
