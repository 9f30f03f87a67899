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
	HasTemplate   bool   `json:"has_template"`
	WeightBytes   int64  `json:"weight_bytes"` // tensor data in this file
	FileBytes     int64  `json:"file_bytes"`
	HeaderBytes   int64  `json:"header_bytes"`
	SplitCount    int    `json:"split_count,omitempty"` // parts of a split model (this is one of them)
}
