package quant

import (
	"fmt"
	"math"
	"strings"
)

// Type is a ggml tensor type, numbered as in ggml.h and the GGUF spec.
// The numbers are part of the file format: never renumber.
type Type uint32

const (
	F32     Type = 0
	F16     Type = 1
	Q4_0    Type = 2
	Q4_1    Type = 3
	Q5_0    Type = 6
	Q5_1    Type = 7
	Q8_0    Type = 8
	Q8_1    Type = 9
	Q2_K    Type = 10
	Q3_K    Type = 11
	Q4_K    Type = 12
	Q5_K    Type = 13
	Q6_K    Type = 14
	Q8_K    Type = 15
	IQ2_XXS Type = 16
	IQ2_XS  Type = 17
	IQ3_XXS Type = 18
	IQ1_S   Type = 19
	IQ4_NL  Type = 20
	IQ3_S   Type = 21
	IQ2_S   Type = 22
	IQ4_XS  Type = 23
	I8      Type = 24
	I16     Type = 25
	I32     Type = 26
	I64     Type = 27
	F64     Type = 28
	IQ1_M   Type = 29
	BF16    Type = 30
	TQ1_0   Type = 34
	TQ2_0   Type = 35
	MXFP4   Type = 39
)

// QK_K is the super-block size of the K-quants and the IQ formats.
const QK_K = 256

type traits struct {
	name      string
	blockSize int // elements per block
	typeSize  int // bytes per block
}

// table lists every type a GGUF file may legally contain, so that files
// with types we cannot compute with still parse and describe themselves.
var table = map[Type]traits{
	F32:     {"F32", 1, 4},
	F16:     {"F16", 1, 2},
	Q4_0:    {"Q4_0", 32, 18},
	Q4_1:    {"Q4_1", 32, 20},
	Q5_0:    {"Q5_0", 32, 22},
	Q5_1:    {"Q5_1", 32, 24},
	Q8_0:    {"Q8_0", 32, 34},
	Q8_1:    {"Q8_1", 32, 36},
	Q2_K:    {"Q2_K", QK_K, 84},
	Q3_K:    {"Q3_K", QK_K, 110},
	Q4_K:    {"Q4_K", QK_K, 144},
	Q5_K:    {"Q5_K", QK_K, 176},
	Q6_K:    {"Q6_K", QK_K, 210},
	Q8_K:    {"Q8_K", QK_K, 292},
	IQ2_XXS: {"IQ2_XXS", QK_K, 66},
	IQ2_XS:  {"IQ2_XS", QK_K, 74},
	IQ3_XXS: {"IQ3_XXS", QK_K, 98},
	IQ1_S:   {"IQ1_S", QK_K, 50},
	IQ4_NL:  {"IQ4_NL", 32, 18},
	IQ3_S:   {"IQ3_S", QK_K, 110},
	IQ2_S:   {"IQ2_S", QK_K, 82},
	IQ4_XS:  {"IQ4_XS", QK_K, 136},
	I8:      {"I8", 1, 1},
	I16:     {"I16", 1, 2},
	I32:     {"I32", 1, 4},
	I64:     {"I64", 1, 8},
	F64:     {"F64", 1, 8},
	IQ1_M:   {"IQ1_M", QK_K, 56},
	BF16:    {"BF16", 1, 2},
	TQ1_0:   {"TQ1_0", QK_K, 54},
	TQ2_0:   {"TQ2_0", QK_K, 66},
	MXFP4:   {"MXFP4", 32, 17},
}

// byType is table as an array indexed by type: RowSize runs once per dot
// product, where a map lookup would cost as much as a short row.
var byType = func() (a [MXFP4 + 1]traits) {
	for t, tr := range table {
		a[t] = tr
	}
	return a
}()

func lookup(t Type) (traits, bool) {
	if int(t) >= len(byType) || byType[t].typeSize == 0 {
		return traits{}, false
	}
	return byType[t], true
}

// Known reports whether t is a type GGUF files may contain.
func (t Type) Known() bool { _, ok := lookup(t); return ok }

// String returns ggml's name for the type ("Q4_K"), or "type(N)".
func (t Type) String() string {
	if tr, ok := lookup(t); ok {
		return tr.name
	}
	return fmt.Sprintf("type(%d)", uint32(t))
}

// BlockSize is the number of elements one block holds (1 for plain types).
// It is 0 for unknown types.
func (t Type) BlockSize() int { tr, _ := lookup(t); return tr.blockSize }

// TypeSize is the number of bytes one block takes. It is 0 for unknown types.
func (t Type) TypeSize() int { tr, _ := lookup(t); return tr.typeSize }

// RowSize returns the bytes taken by n elements of type t, and false when
// n is not a whole number of blocks, t is unknown, or the size overflows int.
func (t Type) RowSize(n int) (int, bool) {
	tr, ok := lookup(t)
	if !ok || n < 0 || n%tr.blockSize != 0 || n/tr.blockSize > math.MaxInt/tr.typeSize {
		return 0, false
	}
	return n / tr.blockSize * tr.typeSize, true
}

// BitsPerWeight is the storage cost of one element in bits.
func (t Type) BitsPerWeight() float64 {
	tr, ok := lookup(t)
	if !ok {
		return 0
	}
	return float64(tr.typeSize*8) / float64(tr.blockSize)
}

// ParseType maps a name such as "q4_k" or "Q8_0" to its Type.
func ParseType(name string) (Type, error) {
	up := strings.ToUpper(strings.TrimSpace(name))
	for t, tr := range table {
		if tr.name == up {
			return t, nil
		}
	}
	return 0, fmt.Errorf("quant: unknown tensor type %q", name)
}
