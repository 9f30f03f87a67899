package cpu_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/churon/churon/engine"
	"github.com/churon/churon/engine/quant"
	"github.com/churon/churon/internal/testdata"
	"github.com/churon/churon/models/synth"
)

// TestInterleavedLogits runs models with Q4_K and Q6_K weights with the
// device's interleave (the default) and without (CHURON_REPACK=0): the
// logits of a prompt at every position (the tile kernels on unpacked
// rows), of single-token steps (the interleave kernel) and of a batched
// step of three sequences (the interleave kernel once per row) are equal
// bit for bit, and the device's name lists the types it held interleaved.
// The real files are the shared quantzoo's Q4_K, Q6_K and Q4_K_M (its
// output, one attn_v and one ffn_down Q6_K); the synthetic ones add a
// tied output (token_embd, interleaved at its first product), a
// vocabulary that ends in a partial group of 16 rows, and a mixture of
// experts (a 3-D tensor's experts sliced from its interleave). The avx2
// level's kernels run too, in a child process with CHURON_CPU=avx2.
func TestInterleavedLogits(t *testing.T) {
	type model struct {
		path func(t *testing.T) string
		held string // the device's name's note where the level interleaves
	}
	models := map[string]model{
		"zoo-Q4_K":   {func(t *testing.T) string { return testdata.Path(t, "quantzoo", "zoo-Q4_K.gguf") }, "Q4_K interleaved"},
		"zoo-Q6_K":   {func(t *testing.T) string { return testdata.Path(t, "quantzoo", "zoo-Q6_K.gguf") }, "Q6_K interleaved"},
		"zoo-Q4_K_M": {func(t *testing.T) string { return testdata.Path(t, "quantzoo", "zoo-Q4_K_M-mixed.gguf") }, "Q4_K, Q6_K interleaved"},
	}
	if quant.SIMDLevel() == "avx2" { // Q4_0's interleave runs at avx2 only
		models["zoo-Q4_0"] = model{func(t *testing.T) string { return testdata.Path(t, "quantzoo", "zoo-Q4_0.gguf") }, "Q4_0 interleaved"}
	}
	tied := synth.Tiny("llama")
	tied.Embd, tied.FF, tied.Vocab, tied.Type, tied.Tied = 256, 512, 333, quant.Q4_K, true
	moe := synth.Tiny("qwen3moe")
	moe.Embd, moe.HeadDim, moe.ExpertFF, moe.Type = 256, 64, 256, quant.Q4_K
	for name, s := range map[string]synth.Spec{"tied": tied, "moe": moe} {
		path := filepath.Join(t.TempDir(), name+".gguf")
		if err := synth.Write(path, s); err != nil {
			t.Fatal(err)
		}
		models[name] = model{func(*testing.T) string { return path }, "Q4_K interleaved"}
	}
	interleaving := quant.KX16Kernel()
	for name, m := range models {
		t.Run(name, func(t *testing.T) {
			path := m.path(t)
			t.Setenv("CHURON_REPACK", "0")
			file, fileName := runModel(t, path)
			t.Setenv("CHURON_REPACK", "1")
			il, ilName := runModel(t, path)
			if strings.Contains(ilName, "; "+m.held) != interleaving || strings.Contains(ilName, " interleaved") != interleaving ||
				!strings.Contains(fileName, "CHURON_REPACK=0") {
				t.Errorf("backends %q and %q at level %s (want %q where it interleaves)", ilName, fileName, quant.SIMDLevel(), m.held)
			}
			for i := range file {
				if file[i].what != il[i].what || len(file[i].logits) != len(il[i].logits) {
					t.Fatalf("runs differ in shape: %s, %s", file[i].what, il[i].what)
				}
				for j, v := range file[i].logits {
					if math.Float32bits(v) != math.Float32bits(il[i].logits[j]) {
						t.Errorf("%s: logit %d = %g interleaved, %g in the file's layout", file[i].what, j, il[i].logits[j], v)
						break
					}
				}
			}
		})
	}
	if os.Getenv("CHURON_CPU") == "" && quant.SIMDLevel() == "avx512" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestInterleavedLogits$", "-test.count=1")
		cmd.Env = append(os.Environ(), "CHURON_CPU=avx2")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("at CHURON_CPU=avx2: %v\n%s", err, out)
		}
	}
}

type logitsRow struct {
	what   string
	logits []float32
}

// runModel loads path on two threads and returns the logits of a 40-token
// prompt, four steps after it and a batched step of three sequences, and
// the backend's name.
func runModel(t *testing.T, path string) ([]logitsRow, string) {
	t.Helper()
	ctx := context.Background()
	m, err := engine.Load(ctx, path, engine.LoadOptions{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	vocab := int32(m.Info().VocabSize)
	tok := func(i int) int32 { return int32(i*7919+11) % vocab }
	var rows []logitsRow
	seq, err := m.NewSequence(engine.SequenceOptions{Context: 256})
	if err != nil {
		t.Fatal(err)
	}
	prompt := make([]int32, 40)
	for i := range prompt {
		prompt[i] = tok(i)
	}
	all, err := seq.FeedAll(ctx, prompt)
	if err != nil {
		t.Fatal(err)
	}
	rows = append(rows, logitsRow{"prompt", all})
	for i := range 4 {
		if err := seq.Feed(ctx, []int32{tok(100 + i)}); err != nil {
			t.Fatal(err)
		}
		rows = append(rows, logitsRow{fmt.Sprintf("step %d", i), append([]float32(nil), seq.Logits()...)})
	}
	seqs := []*engine.Sequence{seq}
	for i := range 2 {
		s, err := m.NewSequence(engine.SequenceOptions{Context: 256})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Feed(ctx, prompt[:5+i]); err != nil {
			t.Fatal(err)
		}
		seqs = append(seqs, s)
	}
	if err := m.DecodeBatch(ctx, seqs, []int32{tok(200), tok(201), tok(202)}); err != nil {
		t.Fatal(err)
	}
	for i, s := range seqs {
		rows = append(rows, logitsRow{fmt.Sprintf("batched step, sequence %d", i), append([]float32(nil), s.Logits()...)})
	}
	return rows, m.Info().Backend
}
