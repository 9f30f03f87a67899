package chat

// Expressions are parsed with Jinja2's grammar (jinja2/parser.py) and
// written back out in a fully parenthesised form for ardanlabs/jinja. The
// round trip lets us (1) keep Jinja2's precedence where ardanlabs differs,
// (2) route the operations the engine cannot bound or gets wrong through
// our own functions: arithmetic, "~", the tojson and string filters, and
// the mutating methods that Hugging Face's immutable sandbox forbids.

// nodeKind says what an expression node is and which of its fields hold
// what (see the comments on the kinds; a, b, c are operands, op a name or
// operator).
type nodeKind uint8

const (
	nName nodeKind = iota
	nConst
	nList
	nTuple
	nDict
	nGetAttr  // a.op
	nGetItem  // a[b]
	nSlice    // a[b:c:d]; nil parts are absent
	nCall     // a(list..., kws...)
	nFilter   // a | op(list..., kws...); a is nil in a {% filter %} tag
	nTest     // a is op(list..., kws...)
	nNot      // not a
	nNeg      // -a
	nPos      // +a
	nBinary   // a op b: + - / // % * ** and or
	nConcat   // list joined by ~
	nCompare  // a, then (ops[i], list[i])...
	nCondExpr // a if b else c (c may be nil)
)

// constKind is the type of an nConst literal.
type constKind uint8

const (
	cNone constKind = iota
	cBool
	cInt
	cFloat
	cString
)

// kwarg is a keyword argument of a call, filter or test.
type kwarg struct {
	name string
	val  *node
}

// node is one node of an expression's syntax tree.
type node struct {
	kind    nodeKind
	op      string
	a, b, c *node
	list    []*node
	kws     []kwarg
	ops     []string   // nCompare
	pairs   [][2]*node // nDict: key, value
	cKind   constKind  // nConst: which of str, num, flt, bl holds it
	str     string
	num     int64
	flt     float64
	bl      bool
	line    int // for error messages
}
