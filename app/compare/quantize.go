package compare

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	api "github.com/churon/churon/app/api/compare"
	"github.com/churon/churon/engine/quantize"
)

// Quantize writes a quantized copy of the model at in to out, so the
// Compare page can offer "make a Q4_K_M of this model" without the UI
// reaching into the engine. The output appears only when complete; a
// cancelled or failed run leaves nothing behind.
func Quantize(ctx context.Context, in, out string, opt api.QuantizeOptions) (api.QuantizeReport, error) {
	rep, err := quantize.File(ctx, in, out, quantize.Options{
		Type:            opt.Type,
		Threads:         opt.Threads,
		AllowRequantize: opt.AllowRequantize,
		Progress:        opt.Progress,
	})
	if err != nil {
		return api.QuantizeReport{}, fmt.Errorf("compare: quantize %s to %s: %w", filepath.Base(in), opt.Type, err)
	}
	return api.QuantizeReport{
		Output:        rep.Output,
		Type:          rep.Type,
		InBytes:       rep.InBytes,
		OutBytes:      rep.OutBytes,
		BitsPerWeight: rep.BitsPerWeight,
		Warnings:      rep.Warnings,
		Duration:      rep.Duration,
	}, nil
}

// QuantizeTypes lists the file types Quantize can make.
func QuantizeTypes() []string { return quantize.Types() }

// IsRequantize reports whether err is Quantize refusing an already
// quantized source, so a caller can ask before retrying with
// AllowRequantize.
func IsRequantize(err error) bool { return errors.Is(err, quantize.ErrRequantize) }

// QuantizedName suggests the output path for a quantized copy of in: the
// same folder, the file type in the name in place of the source's one
// when the name carries it (model-F16.gguf → model-Q4_K_M.gguf).
func QuantizedName(in, typ string) string {
	dir, base := filepath.Split(in)
	stem := strings.TrimSuffix(base, filepath.Ext(base))
	for _, t := range quantize.Types() {
		for _, sep := range []string{"-", ".", "_"} {
			suffix := sep + t
			if len(stem) > len(suffix) && strings.EqualFold(stem[len(stem)-len(suffix):], suffix) {
				return filepath.Join(dir, stem[:len(stem)-len(suffix)]+sep+typ+".gguf")
			}
		}
	}
	return filepath.Join(dir, stem+"-"+typ+".gguf")
}
