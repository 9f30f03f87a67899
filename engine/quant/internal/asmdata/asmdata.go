// Package asmdata writes the read-only tables of the assembly that
// package quant's Go generators (internal/genpacked, internal/gentile)
// write, so that no table's offsets and size are counted by hand.
package asmdata

import (
	"fmt"
	"strings"
)

// Table is the DATA and GLOBL lines of the file-local table name<>
// holding words, little-endian, 8 bytes apiece.
func Table(name string, words ...uint64) string {
	var b strings.Builder
	for i, w := range words {
		fmt.Fprintf(&b, "DATA %s<>+%d(SB)/8, $0x%016x\n", name, 8*i, w)
	}
	fmt.Fprintf(&b, "GLOBL %s<>(SB), RODATA|NOPTR, $%d\n", name, 8*len(words))
	return b.String()
}
