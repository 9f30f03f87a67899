package catalog

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode"

	"github.com/churon/churon/models/hub"
)

func TestEmbeddedCatalog(t *testing.T) {
	c, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	if n := len(c.Models); n < 10 || n > 24 {
		t.Errorf("%d models; the catalog is meant to hold about a dozen", n)
	}
	families := map[string]bool{}
	var minParams, maxParams int64 = 1 << 62, 0
	for _, m := range c.Models {
		families[m.Family] = true
		minParams, maxParams = min(minParams, m.Parameters), max(maxParams, m.Parameters)
		if q := hub.ParseQuant(m.File); !strings.EqualFold(q, m.Quant) {
			t.Errorf("%s: file %s is %q by its name, the entry says %q", m.ID, m.File, q, m.Quant)
		}
		// A wrong digit in a size or a parameter count shows as an
		// impossible number of bits per weight: a Q4_K_M file holds about
		// 4.5–5 bits per weight, more for small models whose embeddings
		// are kept at higher precision.
		if bpw := float64(m.Size) * 8 / float64(m.Parameters); bpw < 4 || bpw > 7.5 {
			t.Errorf("%s: %d bytes for %d parameters is %.1f bits per weight", m.ID, m.Size, m.Parameters, bpw)
		}
		if !hasHangul(m.Description.KO) {
			t.Errorf("%s: the Korean description has no Hangul: %q", m.ID, m.Description.KO)
		}
		if len([]rune(m.Description.EN)) > 140 {
			t.Errorf("%s: the description is meant to be one line (%d characters)", m.ID, len([]rune(m.Description.EN)))
		}
		if !m.Verified {
			t.Logf("NOTE: %s (%s/%s) is not verified", m.ID, m.Repo, m.File)
		}
	}
	for _, f := range []string{"Qwen", "Llama", "Gemma", "Phi", "SmolLM"} {
		if !families[f] {
			t.Errorf("no %s model", f)
		}
	}
	// From 0.5B to 27B dense (Gemma 3 27B, for machines of 24 GB); a
	// mixture of experts of 30–35B reads only about 3B of them per token,
	// so it runs like a dense 3B in 24–32 GB.
	if minParams > 600e6 || maxParams < 7e9 || maxParams > 36e9 {
		t.Errorf("sizes run from %d to %d parameters; want about 0.5B to 27B, or a 30-35B mixture of experts", minParams, maxParams)
	}
	if len(c.Recommended) == 0 {
		t.Fatal("nothing recommended")
	}
	for _, id := range c.Recommended {
		m, _ := c.Find(id)
		if !m.Verified {
			t.Errorf("recommended %s is not verified", id)
		}
	}
}

func hasHangul(s string) bool {
	for _, r := range s {
		if unicode.Is(unicode.Hangul, r) {
			return true
		}
	}
	return false
}

// TestParseRejects breaks one rule at a time in an otherwise good catalog.
func TestParseRejects(t *testing.T) {
	good := func() map[string]any {
		var v map[string]any
		if err := json.Unmarshal(catalogJSON, &v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	first := func(v map[string]any) map[string]any { return v["models"].([]any)[0].(map[string]any) }
	cases := []struct {
		name   string
		mutate func(v map[string]any)
	}{
		{"version", func(v map[string]any) { v["version"] = 2 }},
		{"no models", func(v map[string]any) { v["models"] = []any{}; v["recommended"] = []any{} }},
		{"duplicate id", func(v map[string]any) {
			ms := v["models"].([]any)
			ms[1].(map[string]any)["id"] = ms[0].(map[string]any)["id"]
		}},
		{"upper-case id", func(v map[string]any) { first(v)["id"] = "Qwen" }},
		{"repo without owner", func(v map[string]any) { first(v)["repo"] = "Qwen2.5-GGUF" }},
		{"repo with a path", func(v map[string]any) { first(v)["repo"] = "a/b/c" }},
		{"file in a folder", func(v map[string]any) { first(v)["file"] = "sub/model.gguf" }},
		{"not a GGUF", func(v map[string]any) { first(v)["file"] = "model.bin" }},
		{"no quant", func(v map[string]any) { first(v)["quant"] = "" }},
		{"zero size", func(v map[string]any) { first(v)["size"] = 0 }},
		{"zero layers", func(v map[string]any) { first(v)["layers"] = 0 }},
		{"kv heads do not divide", func(v map[string]any) { first(v)["heads"] = 14; first(v)["kv_heads"] = 4 }},
		{"a window on no layer", func(v map[string]any) { first(v)["sliding_window"] = 512 }},
		{"window layers without a window", func(v map[string]any) { first(v)["window_layers"] = 2 }},
		{"every layer windowed", func(v map[string]any) {
			first(v)["sliding_window"] = 512
			first(v)["window_layers"] = first(v)["layers"]
		}},
		{"state without recurrent layers", func(v map[string]any) { first(v)["state_bytes"] = 1 << 20 }},
		{"recurrent layers without a state", func(v map[string]any) { first(v)["recurrent_layers"] = 2 }},
		{"every layer recurrent", func(v map[string]any) {
			first(v)["state_bytes"] = 1 << 20
			first(v)["recurrent_layers"] = first(v)["layers"]
		}},
		{"no Korean", func(v map[string]any) { first(v)["description"] = map[string]any{"en": "x", "ko": " "} }},
		{"no licence", func(v map[string]any) { first(v)["license"] = "" }},
		{"unknown field", func(v map[string]any) { first(v)["sha"] = "abc" }},
		{"recommends a stranger", func(v map[string]any) { v["recommended"] = []any{"no-such-model"} }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := good()
			tc.mutate(v)
			data, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			_, err = Parse(data)
			if err == nil {
				t.Fatal("accepted")
			}
			if tc.name != "unknown field" && !errors.Is(err, ErrInvalid) {
				t.Errorf("error %v does not wrap ErrInvalid", err)
			}
		})
	}
	// The untouched copy still parses: the cases fail for their own reason.
	data, _ := json.Marshal(good())
	if _, err := Parse(data); err != nil {
		t.Fatalf("the catalog round-tripped through JSON fails: %v", err)
	}
}

func TestDescribeAndRecommend(t *testing.T) {
	c, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	m := c.Models[0]
	for lang, want := range map[string]string{"ko": m.Description.KO, "ko-KR": m.Description.KO, "en": m.Description.EN, "de": m.Description.EN, "": m.Description.EN} {
		if got := m.Describe(lang); got != want {
			t.Errorf("Describe(%q) = %q, want %q", lang, got, want)
		}
	}
	got, ok := c.Recommend(func(Model) bool { return true })
	if !ok || got.ID != c.Recommended[0] {
		t.Errorf("Recommend(all) = %q, %v; want the first recommendation %q", got.ID, ok, c.Recommended[0])
	}
	small, ok := c.Recommend(func(m Model) bool { return m.Size < 1<<30 })
	if !ok || small.Size >= 1<<30 {
		t.Errorf("Recommend(under 1 GiB) = %q (%d bytes), %v", small.ID, small.Size, ok)
	}
	if _, ok := c.Recommend(func(Model) bool { return false }); ok {
		t.Error("Recommend(none) found one")
	}
	if _, ok := c.Find("no-such-model"); ok {
		t.Error("Find found a stranger")
	}
}
