package compare

// Probe is what a model file says about itself before it is loaded: enough
// to pick the reference, refuse mismatched vocabularies and fill the
// columns of a comparison before any model runs.
type Probe struct {
	File        string  `json:"file"`
	Name        string  `json:"name"`
	Type        string  `json:"type"` // file type, e.g. "Q4_0", "F16"
	FileBytes   int64   `json:"file_bytes"`
	WeightBytes int64   `json:"weights_bytes"` // tensor data
	Params      int64   `json:"params"`
	BPW         float64 `json:"bpw"` // bits per weight: 8 × weight bytes / parameters
	VocabSize   int     `json:"vocab_size"`
	VocabSHA256 string  `json:"vocab_sha256"`

	// Tokens is the vocabulary, kept to say where two vocabularies
	// differ; it is not saved.
	Tokens []string `json:"-"`
}
