package fit

// Meta is what a GGUF header says about a model.
type Meta struct {
	Name          string `json:"name"`
	Architecture  string `json:"architecture"`
	Quant         string `json:"quant"` // general.file_type's name, else the dominant weight type
	Parameters    int64  `json:"parameters"`
	ContextLength int    `json:"context_length"`
	Layers        int    `json:"layers"`
	Embedding     int    `json:"embedding"`
	Heads         int    `json:"heads"`
	KVHeads       int    `json:"kv_heads"`
	HeadDimK      int    `json:"head_dim_k"`
	HeadDimV      int    `json:"head_dim_v"`
	// WindowLayers of the Layers attend over a sliding window of
	// SlidingWindow positions (Gemma 3's local layers, gpt-oss's banded
	// ones): their KV cache is a ring of internal/kvring.Rows rows, not
	// one per position.
	SlidingWindow int `json:"sliding_window,omitempty"`
	WindowLayers  int `json:"window_layers,omitempty"`
	// RecurrentLayers of the Layers keep a fixed-size state per sequence
	// instead of KV rows (Qwen 3.5's Gated DeltaNet layers); StateBytes is
	// that state, all those layers' together.
	RecurrentLayers int   `json:"recurrent_layers,omitempty"`
	StateBytes      int64 `json:"state_bytes,omitempty"`
	HasTemplate     bool  `json:"has_template"`
	WeightBytes     int64 `json:"weight_bytes"` // tensor data in this file
	FileBytes       int64 `json:"file_bytes"`
	HeaderBytes     int64 `json:"header_bytes"`
	SplitCount      int   `json:"split_count,omitempty"` // parts of a split model (this is one of them)
}
