package compare

import "context"

// Service is what a front end asks of comparisons: run one in the
// background, quantize a model to compare against, and the choices to
// offer. app/compare's Runner runs them in this process on the engine.
type Service interface {
	// Start begins a comparison and returns at once; see Handle.
	Start(ctx context.Context, opt Options) *Handle
	// Quantize writes a quantized copy of the model at in to out; the
	// output appears only when complete.
	Quantize(ctx context.Context, in, out string, opt QuantizeOptions) (QuantizeReport, error)
	// QuantizeTypes lists the file types Quantize makes, QuantizedName
	// suggests an output path, and IsRequantize tells the error of a
	// source that is already quantized (to ask before AllowRequantize).
	QuantizeTypes() []string
	QuantizedName(in, typ string) string
	IsRequantize(err error) bool
	// DefaultSampling is the sampler a comparison starts from.
	DefaultSampling() Sampling
}
