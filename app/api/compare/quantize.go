package compare

import "time"

// QuantizeOptions configure Quantize.
type QuantizeOptions struct {
	// Type is a llama-quantize file type such as "Q4_K_M" or "Q8_0"
	// (QuantizeTypes lists them).
	Type string
	// Threads quantizing rows in parallel; 0 uses every core.
	Threads int
	// AllowRequantize accepts a source that is already quantized: its
	// weights are dequantized first, which compounds the two errors.
	AllowRequantize bool
	// Progress, when set, is called with bytes of source done and total.
	Progress func(done, total int64)
}

// QuantizeReport is what a finished quantization made.
type QuantizeReport struct {
	Output        string
	Type          string
	InBytes       int64
	OutBytes      int64
	BitsPerWeight float64
	Warnings      []string
	Duration      time.Duration
}
