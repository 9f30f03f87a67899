package cli

import (
	"encoding/binary"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/churon/churon/internal/testdata"
	"github.com/churon/churon/models/synth"
)

// TestTokenizeAndLogits: tokenize adds BOS, and logits gives the same
// numbers as JSON and as raw float32s.
func TestTokenizeAndLogits(t *testing.T) {
	model := synthFile(t, "llama")
	var ids []int32
	runJSON(t, &ids, "tokenize", "-m", model, "--json", "Once upon a time")
	if len(ids) < 2 || ids[0] != 1 {
		t.Fatalf("ids %v", ids)
	}
	var logits []float32
	runJSON(t, &logits, "logits", "-m", model, "--tokens", "1,300,301", "--json")
	if len(logits) != 320 {
		t.Fatalf("%d logits", len(logits))
	}
	bin := filepath.Join(t.TempDir(), "l.f32")
	runOK(t, "logits", "-m", model, "--tokens", "1,300,301", "--out", bin)
	raw := readFile(t, bin)
	if len(raw) != 4*len(logits) {
		t.Fatalf("raw logits: %d bytes for %d logits", len(raw), len(logits))
	}
	for i, v := range logits {
		if math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:])) != v {
			t.Fatalf("logit %d differs between --json and --out", i)
		}
	}
}

// TestInfoNamesTheTemplate: info says which chat format a model's
// template is, or that it has none (it printed "chat template: false").
func TestInfoNamesTheTemplate(t *testing.T) {
	cases := []struct {
		name, path, want string
	}{
		{"ChatML template", synthFile(t, "llama"), "chat template: ChatML\n"},
		{"no template", testdata.Stories260K(t), "chat template: none ("},
	}
	for _, c := range cases {
		out, _ := runOK(t, "info", "-m", c.path)
		if !strings.Contains(out, c.want) {
			t.Errorf("%s: info says\n%s\nwant %q", c.name, out, c.want)
		}
	}
}

// TestInfoCountsRings: info says what a conversation's KV cache takes, a
// sliding-window model's rings counted, at the context and KV type asked.
func TestInfoCountsRings(t *testing.T) {
	oss := synth.Tiny("gpt-oss")
	oss.Context = 8192
	path := writeSynth(t, filepath.Join(t.TempDir(), "oss.gguf"), oss)
	for _, c := range []struct {
		args []string
		want string
	}{
		// 2 layers, 2 KV heads of 32: 256 bytes a position per layer in F16;
		// the banded one keeps 576 positions
		{nil, "kv cache:      1.1 MiB at 4096 tokens (f16; 1 of 2 layers keep a ring of 576 rows: a window of 8 + 512), per conversation\n"},
		{[]string{"-c", "512"}, "kv cache:      256.0 KiB at 512 tokens (f16), per conversation\n"},
		{[]string{"-c", "8192", "--kv", "q8_0"}, "kv cache:      1.1 MiB at 8192 tokens (q8_0; 1 of 2 layers keep"},
	} {
		out, _ := runOK(t, append([]string{"info", "-m", path}, c.args...)...)
		if !strings.Contains(out, c.want) {
			t.Errorf("info %v says\n%s\nwant %q", c.args, out, c.want)
		}
	}
}
