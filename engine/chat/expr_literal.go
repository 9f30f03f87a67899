package chat

import (
	"math"
	"strconv"
	"strings"
)

// pick is a conditional expression for strings.
func pick(cond bool, a, b string) string {
	if cond {
		return a
	}
	return b
}

// constLiteral writes an nConst as ardanlabs/jinja reads it back.
func constLiteral(n *node) string {
	switch n.cKind {
	case cNone:
		return "none"
	case cBool:
		if n.bl {
			return "true"
		}
		return "false"
	case cInt:
		return strconv.FormatInt(n.num, 10)
	case cFloat:
		if math.IsInf(n.flt, 0) || math.IsNaN(n.flt) {
			// Only reachable from a literal too large for float64, which
			// Python reads as inf; 1e999 is the engine's way to say it.
			return "1.0e999"
		}
		s := strconv.FormatFloat(n.flt, 'f', -1, 64)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	return quoteLiteral(n.str)
}

// quoteLiteral writes s as a string literal that ardanlabs/jinja reads back
// unchanged: it knows only \\, \', \", \n and \t, and takes other bytes raw.
func quoteLiteral(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('\'')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\':
			b.WriteString(`\\`)
		case '\'':
			b.WriteString(`\'`)
		case '\n':
			b.WriteString(`\n`)
		case '\t':
			b.WriteString(`\t`)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('\'')
	return b.String()
}
