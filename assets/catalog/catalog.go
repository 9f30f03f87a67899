package catalog

import (
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

//go:embed catalog.json
var catalogJSON []byte

// Text is a short text in the UI's languages.
type Text struct {
	EN string `json:"en"`
	KO string `json:"ko"`
}

// Model is one entry of the catalog.
type Model struct {
	ID     string `json:"id"`     // stable key, e.g. "qwen2.5-1.5b-instruct"
	Name   string `json:"name"`   // what a person reads
	Family string `json:"family"` // Qwen, Llama, Gemma, Phi, SmolLM
	Repo   string `json:"repo"`   // Hugging Face repository, owner/name
	File   string `json:"file"`   // the recommended GGUF file in Repo
	Quant  string `json:"quant"`  // its quantization, e.g. "Q4_K_M"
	// Size is the file's approximate size in bytes.
	Size         int64  `json:"size"`
	Parameters   int64  `json:"parameters"`
	Context      int    `json:"context"`      // trained context length, in tokens
	Architecture string `json:"architecture"` // general.architecture of the GGUF
	// The shape, for the memory estimate: the KV cache grows with
	// Layers × KVHeads × HeadDim per token.
	Layers    int `json:"layers"`
	Heads     int `json:"heads"`
	KVHeads   int `json:"kv_heads"`
	HeadDim   int `json:"head_dim"`
	Embedding int `json:"embedding"`
	// WindowLayers of the Layers attend over a sliding window of
	// SlidingWindow positions (Gemma 3's local layers, gpt-oss's banded
	// ones) and keep a ring of KV rows, not one per position.
	SlidingWindow int `json:"sliding_window,omitempty"`
	WindowLayers  int `json:"window_layers,omitempty"`
	// RecurrentLayers of the Layers keep a fixed-size state per
	// conversation instead of KV rows (Qwen 3.5's Gated DeltaNet layers);
	// StateBytes is that state, all of them together.
	RecurrentLayers int    `json:"recurrent_layers,omitempty"`
	StateBytes      int64  `json:"state_bytes,omitempty"`
	License         string `json:"license"`
	// Description is one line about what the model is good at.
	Description Text `json:"description"`
	// Verified is true when the repository and file name were confirmed to
	// exist on the hub when the entry was written.
	Verified bool `json:"verified"`
}

// Describe returns the description in a language ("en", "ko"), falling
// back to English.
func (m Model) Describe(lang string) string {
	if strings.HasPrefix(lang, "ko") && m.Description.KO != "" {
		return m.Description.KO
	}
	return m.Description.EN
}

// Catalog is the whole list.
type Catalog struct {
	Version int `json:"version"`
	// Recommended lists model IDs in the order the app offers them to a
	// new user: the first that suits the machine is suggested.
	Recommended []string `json:"recommended"`
	Models      []Model  `json:"models"`
}

// ErrInvalid: the catalog breaks one of its rules. Errors wrap it.
var ErrInvalid = errors.New("catalog: invalid")

// Load parses the embedded catalog.
func Load() (*Catalog, error) { return Parse(catalogJSON) }

// Parse reads and validates a catalog in catalog.json's format.
func Parse(data []byte) (*Catalog, error) {
	var c Catalog
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("catalog: %w", err)
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return &c, nil
}

// Validate checks every entry: unique IDs, repositories named owner/name,
// GGUF file names without folders, positive sizes and shapes, heads that
// divide evenly among KV heads, descriptions in both languages, and
// recommendations that name entries.
func (c *Catalog) Validate() error {
	if c.Version != 1 {
		return fmt.Errorf("%w: version %d (want 1)", ErrInvalid, c.Version)
	}
	if len(c.Models) == 0 {
		return fmt.Errorf("%w: no models", ErrInvalid)
	}
	seen := map[string]bool{}
	for i, m := range c.Models {
		bad := func(format string, a ...any) error {
			return fmt.Errorf("%w: model %d (%q): %s", ErrInvalid, i, m.ID, fmt.Sprintf(format, a...))
		}
		switch {
		case m.ID == "" || strings.ToLower(m.ID) != m.ID || strings.ContainsAny(m.ID, " /"):
			return bad("id must be lower case without spaces or slashes")
		case seen[m.ID]:
			return bad("duplicate id")
		case m.Name == "" || m.Family == "" || m.License == "" || m.Architecture == "":
			return bad("name, family, license and architecture are required")
		case !validRepo(m.Repo):
			return bad("repo %q is not owner/name", m.Repo)
		case !strings.HasSuffix(strings.ToLower(m.File), ".gguf") || strings.ContainsAny(m.File, "/\\") || strings.HasPrefix(m.File, "."):
			return bad("file %q is not a GGUF file name", m.File)
		case m.Quant == "":
			return bad("quant is required")
		case m.Size <= 0 || m.Parameters <= 0 || m.Context <= 0:
			return bad("size, parameters and context must be positive")
		case m.Layers <= 0 || m.Heads <= 0 || m.KVHeads <= 0 || m.HeadDim <= 0 || m.Embedding <= 0:
			return bad("the shape (layers, heads, kv_heads, head_dim, embedding) must be positive")
		case m.Heads%m.KVHeads != 0:
			return bad("%d heads do not divide among %d KV heads", m.Heads, m.KVHeads)
		case m.SlidingWindow < 0 || m.WindowLayers < 0 || m.WindowLayers >= m.Layers || (m.SlidingWindow > 0) != (m.WindowLayers > 0):
			return bad("a sliding window of %d on %d of %d layers", m.SlidingWindow, m.WindowLayers, m.Layers)
		case m.RecurrentLayers < 0 || m.RecurrentLayers >= m.Layers || m.StateBytes < 0 || (m.StateBytes > 0) != (m.RecurrentLayers > 0):
			return bad("%d bytes of recurrent state in %d of %d layers", m.StateBytes, m.RecurrentLayers, m.Layers)
		case strings.TrimSpace(m.Description.EN) == "" || strings.TrimSpace(m.Description.KO) == "":
			return bad("a description in English and Korean is required")
		}
		seen[m.ID] = true
	}
	for _, id := range c.Recommended {
		if !seen[id] {
			return fmt.Errorf("%w: recommended %q is not in the catalog", ErrInvalid, id)
		}
	}
	return nil
}

func validRepo(r string) bool {
	owner, name, ok := strings.Cut(r, "/")
	return ok && owner != "" && name != "" && !strings.ContainsAny(name, "/ ") && !strings.Contains(r, "..")
}

// Find returns the model with an ID.
func (c *Catalog) Find(id string) (Model, bool) {
	for _, m := range c.Models {
		if m.ID == id {
			return m, true
		}
	}
	return Model{}, false
}

// Recommend returns the first recommended model that suits (for which ok
// returns true), in the catalog's order of preference.
func (c *Catalog) Recommend(ok func(Model) bool) (Model, bool) {
	for _, id := range c.Recommended {
		if m, found := c.Find(id); found && ok(m) {
			return m, true
		}
	}
	return Model{}, false
}
