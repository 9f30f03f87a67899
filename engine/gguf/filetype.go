package gguf

import "github.com/churon/churon/engine/quant"

// fileTypeNames maps llama.cpp's general.file_type (llama_ftype) to the
// names people know quantizations by; the numbers are part of the format.
var fileTypeNames = map[uint64]string{
	0: "F32", 1: "F16", 2: "Q4_0", 3: "Q4_1", 7: "Q8_0", 8: "Q5_0", 9: "Q5_1",
	10: "Q2_K", 11: "Q3_K_S", 12: "Q3_K_M", 13: "Q3_K_L", 14: "Q4_K_S", 15: "Q4_K_M",
	16: "Q5_K_S", 17: "Q5_K_M", 18: "Q6_K", 19: "IQ2_XXS", 20: "IQ2_XS", 21: "Q2_K_S",
	22: "IQ3_XS", 23: "IQ3_XXS", 24: "IQ1_S", 25: "IQ4_NL", 26: "IQ3_S", 27: "IQ3_M",
	28: "IQ2_S", 29: "IQ2_M", 30: "IQ4_XS", 31: "IQ1_M", 32: "BF16", 36: "TQ1_0", 37: "TQ2_0", 38: "MXFP4_MOE",
}

// FileType names the file's quantization as people know it ("Q4_K_M"):
// general.file_type when the file states a known one, otherwise the type
// holding the most bytes of matrix weights, or "" for a file without
// matrices (a vocabulary-only file).
func (f *File) FileType() string {
	if ft, ok := f.Uint("general.file_type"); ok {
		if name, ok := fileTypeNames[ft]; ok {
			return name
		}
	}
	bytes := map[quant.Type]uint64{}
	for _, t := range f.Tensors {
		if len(t.Shape) >= 2 {
			bytes[t.Type] += t.Size
		}
	}
	var best quant.Type
	var most uint64
	for t, b := range bytes {
		if b > most || (b == most && t < best) {
			best, most = t, b
		}
	}
	if most == 0 {
		return ""
	}
	return best.String()
}
