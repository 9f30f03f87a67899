package tokenizer

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/churon/churon/engine/gguf"
	"github.com/churon/churon/internal/cputime"
)

// mixedText returns about n bytes of mixed English and Korean prose, code
// and numbers.
func mixedText(n int) string {
	parts := []string{
		"The quick brown fox jumps over the lazy dog. ",
		"학습이 완료된 모델을 사용해 새로운 데이터에 대한 예측을 수행합니다. ",
		"It's 2024-11-29, and we've got 1,234,567.89 reasons to smile 😊. ",
		"대한민국의 수도는 서울특별시입니다. 오늘 날씨 최고예요!\n",
		"for (int i = 0; i < n; ++i) { sum += a[i]; }  // 합계\n",
		"LLM 추론 엔진은 GGUF 파일에서 토크나이저(tokenizer)와 채팅 템플릿을 읽습니다.\n\n",
	}
	var sb strings.Builder
	for i := 0; sb.Len() < n; i++ {
		sb.WriteString(parts[i%len(parts)])
	}
	return sb.String()
}

func benchEncode(b *testing.B, name string) {
	tk := loadVocab(b, name)
	text := mixedText(10 << 10)
	b.SetBytes(int64(len(text)))
	b.ResetTimer()
	var n int
	for b.Loop() {
		n = len(tk.Encode(text, EncodeOptions{ParseSpecial: true}))
	}
	b.ReportMetric(float64(n), "tokens/op")
}

// BenchmarkEncode10KB encodes ~10 KB of mixed English/Korean text.
func BenchmarkEncode10KB(b *testing.B) {
	for _, name := range []string{"qwen3", "llama3", "llama-spm"} {
		b.Run(name, func(b *testing.B) { benchEncode(b, name) })
	}
}

func BenchmarkDecode10KB(b *testing.B) {
	tk := loadVocab(b, "qwen3")
	ids := tk.Encode(mixedText(10<<10), EncodeOptions{})
	b.ResetTimer()
	for b.Loop() {
		_ = tk.Decode(ids, DecodeOptions{})
	}
}

func BenchmarkLoad(b *testing.B) {
	path := filepath.Join(vocabDir(b), "ggml-vocab-llama3.gguf")
	if _, err := os.Stat(path); err != nil {
		b.Skipf("SKIP: %s not found", path)
	}
	f, err := gguf.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	for b.Loop() {
		if _, err := FromGGUF(f); err != nil {
			b.Fatal(err)
		}
	}
}

// TestEncodeLinear guards against quadratic behaviour: a 40x longer input
// must not take more than ~40x (with generous slack) the CPU time. CPU
// time, not the wall clock: on a shared machine the wall clock of the
// long encode counts every time it was preempted.
func TestEncodeLinear(t *testing.T) {
	if testing.Short() {
		t.Skip("timing test")
	}
	inputs := map[string]func(int) string{
		"mixed":  mixedText,
		"spaces": func(n int) string { return strings.Repeat(" ", n) },
		"letter": func(n int) string { return strings.Repeat("a", n) },
		"hangul": func(n int) string { return strings.Repeat("가", n/3) },
		"digits": func(n int) string { return strings.Repeat("7", n) },
		"punct":  func(n int) string { return strings.Repeat("!?", n/2) },
		"nl":     func(n int) string { return strings.Repeat(" \n", n/2) },
	}
	worst, worstAt := 0.0, ""
	defer func() { t.Logf("the largest ratio, 80 KB to 2 KB: %.0fx (%s)", worst, worstAt) }()
	for _, name := range []string{"llama3", "qwen3", "deepseek-llm", "llama-spm"} {
		tk := loadVocab(t, name)
		for kind, gen := range inputs {
			small, large := gen(2<<10), gen(80<<10)
			timeOf := func(s string) time.Duration {
				best := time.Duration(1 << 62)
				for range 3 {
					best = min(best, cputime.Of(func() { tk.Encode(s, EncodeOptions{}) }))
				}
				return best
			}
			ts, tl := timeOf(small), timeOf(large)
			if tl > 200*ts+20*time.Millisecond {
				t.Errorf("%s/%s: 2 KB in %v but 80 KB in %v: not linear", name, kind, ts, tl)
			}
			if r := float64(tl) / float64(ts); r > worst {
				worst, worstAt = r, name+"/"+kind
			}
		}
	}
}
