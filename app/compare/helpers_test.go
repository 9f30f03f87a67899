package compare

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	api "github.com/churon/churon/app/api/compare"
	"github.com/churon/churon/app/paths"
	"github.com/churon/churon/engine"
	"github.com/churon/churon/engine/sample"
	"github.com/churon/churon/models/synth"
	"github.com/churon/churon/models/synth/synthtest"
)

func TestMain(m *testing.M) {
	d, err := os.MkdirTemp("", "churon-compare-test-*")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// Scratch files go to the cache folder: keep the real one untouched.
	os.Setenv(paths.EnvHome, filepath.Join(d, "home"))
	code := m.Run()
	synthtest.Remove()
	os.RemoveAll(d)
	os.Exit(code)
}

// tinyModel writes (once per test binary) a small synthetic qwen2 model:
// the same seed and vocabulary give the same weights, ft only changes how
// they are stored, so F16 and Q4_0 are one model in two quantizations.
func tinyModel(t testing.TB, ft synth.FileType, vocab int, noTemplate bool) string {
	t.Helper()
	s := synth.Tiny("qwen2")
	s.Embd, s.FF, s.Heads, s.KVHeads = 128, 256, 4, 2
	s.Context = 512
	s.FileType = ft
	s.Vocab = vocab
	s.NoTemplate = noTemplate
	return synthtest.Path(t, fmt.Sprintf("%s-v%d-t%v", ft, vocab, noTemplate), s)
}

// TinyModel is tinyModel for the package's external tests.
var TinyModel = tinyModel

// greedy are deterministic settings that always produce n tokens.
func greedy(n int) api.Sampling {
	return SamplingOf(engine.GenerateOptions{MaxTokens: n, Sampling: sample.Greedy(), IgnoreEOS: true})
}
