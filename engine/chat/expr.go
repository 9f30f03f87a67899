package chat

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
)

// Expressions are parsed with Jinja2's grammar (jinja2/parser.py) and
// written back out in a fully parenthesised form for ardanlabs/jinja. The
// round trip lets us (1) keep Jinja2's precedence where ardanlabs differs,
// (2) route the operations the engine cannot bound or gets wrong through
// our own functions: arithmetic, "~", the tojson and string filters, and
// the mutating methods that Hugging Face's immutable sandbox forbids.

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

type constKind uint8

const (
	cNone constKind = iota
	cBool
	cInt
	cFloat
	cString
)

type kwarg struct {
	name string
	val  *node
}

type node struct {
	kind    nodeKind
	op      string
	a, b, c *node
	list    []*node
	kws     []kwarg
	ops     []string // nCompare
	pairs   [][2]*node
	cKind   constKind
	str     string
	num     int64
	flt     float64
	bl      bool
	line    int
}

type parser struct {
	toks  []token
	pos   int
	depth int
	line  int
}

func newParser(toks []token, line int) *parser { return &parser{toks: toks, line: line} }

func (p *parser) errorf(format string, args ...any) error {
	line := p.line
	if p.pos < len(p.toks) {
		line = p.toks[p.pos].line
	} else if len(p.toks) > 0 {
		line = p.toks[len(p.toks)-1].line
	}
	return fmt.Errorf("line %d: %w", line, fmt.Errorf(format, args...))
}

func (p *parser) done() bool { return p.pos >= len(p.toks) }

func (p *parser) peek() token {
	if p.done() {
		return token{kind: tOp, s: ""}
	}
	return p.toks[p.pos]
}

func (p *parser) look() token {
	if p.pos+1 >= len(p.toks) {
		return token{kind: tOp, s: ""}
	}
	return p.toks[p.pos+1]
}

func (p *parser) next() token {
	t := p.peek()
	if !p.done() {
		p.pos++
	}
	return t
}

func (p *parser) isOp(s string) bool   { return p.peek().is(tOp, s) }
func (p *parser) isName(s string) bool { return p.peek().is(tName, s) }

func (p *parser) skipOp(s string) bool {
	if p.isOp(s) {
		p.pos++
		return true
	}
	return false
}

func (p *parser) skipName(s string) bool {
	if p.isName(s) {
		p.pos++
		return true
	}
	return false
}

func (p *parser) expectOp(s string) error {
	if !p.skipOp(s) {
		return p.errorf("expected %q, got %s", s, describe(p.peek()))
	}
	return nil
}

func (p *parser) expectName() (string, error) {
	t := p.peek()
	if t.kind != tName {
		return "", p.errorf("expected a name, got %s", describe(t))
	}
	p.pos++
	return t.s, nil
}

func describe(t token) string {
	if t.kind == tOp && t.s == "" {
		return "end of tag"
	}
	if t.kind == tString {
		return strconv.Quote(t.s)
	}
	return fmt.Sprintf("%q", t.s)
}

func (p *parser) enter() error {
	p.depth++
	if p.depth > maxNesting {
		return p.errorf("expression nested deeper than %d", maxNesting)
	}
	return nil
}

func (p *parser) leave() { p.depth-- }

func (p *parser) mk(kind nodeKind) *node {
	line := p.line
	if p.pos < len(p.toks) {
		line = p.toks[p.pos].line
	}
	return &node{kind: kind, line: line}
}

// isTupleEnd reports the end of a tuple: end of tag, ")" or a word in extra.
func (p *parser) isTupleEnd(extra ...string) bool {
	if p.done() || p.isOp(")") {
		return true
	}
	for _, w := range extra {
		if p.isName(w) {
			return true
		}
	}
	return false
}

// parseTuple parses comma-separated expressions; a single one without a
// comma is returned as is.
func (p *parser) parseTuple(withCondexpr, explicitParens bool, extra ...string) (*node, error) {
	t := p.mk(nTuple)
	isTuple := false
	for {
		if len(t.list) > 0 {
			if err := p.expectOp(","); err != nil {
				return nil, err
			}
		}
		if p.isTupleEnd(extra...) {
			break
		}
		e, err := p.parseExpression(withCondexpr)
		if err != nil {
			return nil, err
		}
		t.list = append(t.list, e)
		if p.isOp(",") {
			isTuple = true
		} else {
			break
		}
	}
	if !isTuple {
		if len(t.list) == 1 {
			return t.list[0], nil
		}
		if !explicitParens {
			return nil, p.errorf("expected an expression, got %s", describe(p.peek()))
		}
	}
	return t, nil
}

func (p *parser) parseExpression(withCondexpr bool) (*node, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.leave()
	if withCondexpr {
		return p.parseCondexpr()
	}
	return p.parseOr()
}

func (p *parser) parseCondexpr() (*node, error) {
	e1, err := p.parseOr()
	if err != nil {
		return nil, err
	}
	for p.skipName("if") {
		e2, err := p.parseOr()
		if err != nil {
			return nil, err
		}
		var e3 *node
		if p.skipName("else") {
			if err := p.enter(); err != nil {
				return nil, err
			}
			e3, err = p.parseCondexpr()
			p.leave()
			if err != nil {
				return nil, err
			}
		}
		e1 = &node{kind: nCondExpr, a: e1, b: e2, c: e3, line: e1.line}
	}
	return e1, nil
}

func (p *parser) parseOr() (*node, error) {
	left, err := p.parseAnd()
	if err != nil {
		return nil, err
	}
	for p.skipName("or") {
		right, err := p.parseAnd()
		if err != nil {
			return nil, err
		}
		left = &node{kind: nBinary, op: "or", a: left, b: right, line: left.line}
	}
	return left, nil
}

func (p *parser) parseAnd() (*node, error) {
	left, err := p.parseNot()
	if err != nil {
		return nil, err
	}
	for p.skipName("and") {
		right, err := p.parseNot()
		if err != nil {
			return nil, err
		}
		left = &node{kind: nBinary, op: "and", a: left, b: right, line: left.line}
	}
	return left, nil
}

func (p *parser) parseNot() (*node, error) {
	if p.isName("not") {
		n := p.mk(nNot)
		p.pos++
		if err := p.enter(); err != nil {
			return nil, err
		}
		defer p.leave()
		a, err := p.parseNot()
		if err != nil {
			return nil, err
		}
		n.a = a
		return n, nil
	}
	return p.parseCompare()
}

func (p *parser) parseCompare() (*node, error) {
	e, err := p.parseMath1()
	if err != nil {
		return nil, err
	}
	var cmp *node
	for {
		var op string
		t := p.peek()
		switch {
		case t.kind == tOp && (t.s == "==" || t.s == "!=" || t.s == "<" || t.s == "<=" || t.s == ">" || t.s == ">="):
			op = t.s
			p.pos++
		case p.isName("in"):
			op = "in"
			p.pos++
		case p.isName("not") && p.look().is(tName, "in"):
			op = "not in"
			p.pos += 2
		}
		if op == "" {
			break
		}
		right, err := p.parseMath1()
		if err != nil {
			return nil, err
		}
		if cmp == nil {
			cmp = &node{kind: nCompare, a: e, line: e.line}
		}
		cmp.ops = append(cmp.ops, op)
		cmp.list = append(cmp.list, right)
	}
	if cmp != nil {
		return cmp, nil
	}
	return e, nil
}

func (p *parser) parseMath1() (*node, error) {
	left, err := p.parseConcat()
	if err != nil {
		return nil, err
	}
	for p.isOp("+") || p.isOp("-") {
		op := p.next().s
		right, err := p.parseConcat()
		if err != nil {
			return nil, err
		}
		left = &node{kind: nBinary, op: op, a: left, b: right, line: left.line}
	}
	return left, nil
}

func (p *parser) parseConcat() (*node, error) {
	first, err := p.parseMath2()
	if err != nil {
		return nil, err
	}
	if !p.isOp("~") {
		return first, nil
	}
	n := &node{kind: nConcat, list: []*node{first}, line: first.line}
	for p.skipOp("~") {
		e, err := p.parseMath2()
		if err != nil {
			return nil, err
		}
		n.list = append(n.list, e)
	}
	return n, nil
}

func (p *parser) parseMath2() (*node, error) {
	left, err := p.parsePow()
	if err != nil {
		return nil, err
	}
	for p.isOp("*") || p.isOp("/") || p.isOp("//") || p.isOp("%") {
		op := p.next().s
		right, err := p.parsePow()
		if err != nil {
			return nil, err
		}
		left = &node{kind: nBinary, op: op, a: left, b: right, line: left.line}
	}
	return left, nil
}

func (p *parser) parsePow() (*node, error) {
	left, err := p.parseUnary(true)
	if err != nil {
		return nil, err
	}
	for p.skipOp("**") {
		right, err := p.parseUnary(true)
		if err != nil {
			return nil, err
		}
		left = &node{kind: nBinary, op: "**", a: left, b: right, line: left.line}
	}
	return left, nil
}

func (p *parser) parseUnary(withFilter bool) (*node, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.leave()
	var n *node
	switch {
	case p.isOp("-") || p.isOp("+"):
		kind := nNeg
		if p.isOp("+") {
			kind = nPos
		}
		n = p.mk(kind)
		p.pos++
		a, err := p.parseUnary(false)
		if err != nil {
			return nil, err
		}
		n.a = a
	default:
		var err error
		if n, err = p.parsePrimary(); err != nil {
			return nil, err
		}
	}
	n, err := p.parsePostfix(n)
	if err != nil {
		return nil, err
	}
	if withFilter {
		return p.parseFilterExpr(n)
	}
	return n, nil
}

func (p *parser) parsePrimary() (*node, error) {
	t := p.peek()
	n := p.mk(nConst)
	switch t.kind {
	case tName:
		p.pos++
		switch t.s {
		case "true", "True", "false", "False":
			n.cKind, n.bl = cBool, t.s == "true" || t.s == "True"
		case "none", "None":
			n.cKind = cNone
		default:
			n.kind, n.op = nName, t.s
		}
		return n, nil
	case tString:
		var b strings.Builder
		for p.peek().kind == tString {
			b.WriteString(p.next().s)
		}
		n.cKind, n.str = cString, b.String()
		return n, nil
	case tInt:
		p.pos++
		v, err := parsePyInt(t.s)
		if err != nil {
			return nil, p.errorf("%v", err)
		}
		n.cKind, n.num = cInt, v
		return n, nil
	case tFloat:
		p.pos++
		f, err := strconv.ParseFloat(strings.ReplaceAll(t.s, "_", ""), 64)
		if err != nil && !math.IsInf(f, 0) {
			return nil, p.errorf("bad float literal %q", t.s)
		}
		n.cKind, n.flt = cFloat, f
		return n, nil
	}
	switch {
	case p.skipOp("("):
		e, err := p.parseTuple(true, true)
		if err != nil {
			return nil, err
		}
		if err := p.expectOp(")"); err != nil {
			return nil, err
		}
		return e, nil
	case p.isOp("["):
		return p.parseList()
	case p.isOp("{"):
		return p.parseDict()
	}
	return nil, p.errorf("unexpected %s", describe(t))
}

func parsePyInt(s string) (int64, error) {
	s = strings.ReplaceAll(s, "_", "")
	base := 10
	if len(s) > 1 && s[0] == '0' {
		switch s[1] {
		case 'b', 'B':
			base, s = 2, s[2:]
		case 'o', 'O':
			base, s = 8, s[2:]
		case 'x', 'X':
			base, s = 16, s[2:]
		}
	}
	var z big.Int
	if _, ok := z.SetString(s, base); !ok {
		return 0, fmt.Errorf("bad integer literal %q", s)
	}
	if !z.IsInt64() {
		return 0, fmt.Errorf("integer literal %s does not fit in 64 bits", z.String())
	}
	return z.Int64(), nil
}

func (p *parser) parseList() (*node, error) {
	n := p.mk(nList)
	if err := p.expectOp("["); err != nil {
		return nil, err
	}
	for !p.isOp("]") {
		if len(n.list) > 0 {
			if err := p.expectOp(","); err != nil {
				return nil, err
			}
			if p.isOp("]") {
				break
			}
		}
		e, err := p.parseExpression(true)
		if err != nil {
			return nil, err
		}
		n.list = append(n.list, e)
	}
	return n, p.expectOp("]")
}

func (p *parser) parseDict() (*node, error) {
	n := p.mk(nDict)
	if err := p.expectOp("{"); err != nil {
		return nil, err
	}
	for !p.isOp("}") {
		if len(n.pairs) > 0 {
			if err := p.expectOp(","); err != nil {
				return nil, err
			}
			if p.isOp("}") {
				break
			}
		}
		k, err := p.parseExpression(true)
		if err != nil {
			return nil, err
		}
		if err := p.expectOp(":"); err != nil {
			return nil, err
		}
		v, err := p.parseExpression(true)
		if err != nil {
			return nil, err
		}
		n.pairs = append(n.pairs, [2]*node{k, v})
	}
	return n, p.expectOp("}")
}

func (p *parser) parsePostfix(n *node) (*node, error) {
	for {
		var err error
		switch {
		case p.isOp(".") || p.isOp("["):
			n, err = p.parseSubscript(n)
		case p.isOp("("):
			n, err = p.parseCall(n)
		default:
			return n, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

func (p *parser) parseFilterExpr(n *node) (*node, error) {
	for {
		var err error
		switch {
		case p.isOp("|"):
			n, err = p.parseFilter(n, false)
		case p.isName("is"):
			n, err = p.parseTest(n)
		case p.isOp("("):
			n, err = p.parseCall(n)
		default:
			return n, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

func (p *parser) parseSubscript(base *node) (*node, error) {
	if p.skipOp(".") {
		t := p.next()
		switch t.kind {
		case tName:
			return &node{kind: nGetAttr, a: base, op: t.s, line: t.line}, nil
		case tInt:
			v, err := parsePyInt(t.s)
			if err != nil {
				return nil, p.errorf("%v", err)
			}
			idx := &node{kind: nConst, cKind: cInt, num: v, line: t.line}
			return &node{kind: nGetItem, a: base, b: idx, line: t.line}, nil
		}
		return nil, p.errorf("expected name or number after '.', got %s", describe(t))
	}
	if err := p.expectOp("["); err != nil {
		return nil, err
	}
	var args []*node
	for !p.isOp("]") {
		if len(args) > 0 {
			if err := p.expectOp(","); err != nil {
				return nil, err
			}
		}
		a, err := p.parseSubscribed()
		if err != nil {
			return nil, err
		}
		args = append(args, a)
	}
	if err := p.expectOp("]"); err != nil {
		return nil, err
	}
	switch {
	case len(args) == 0:
		return nil, p.errorf("expected subscript expression")
	case len(args) == 1 && args[0].kind == nSlice:
		args[0].a = base
		return args[0], nil
	case len(args) == 1:
		return &node{kind: nGetItem, a: base, b: args[0], line: base.line}, nil
	}
	return nil, p.errorf("tuple subscripts are not supported")
}

// parseSubscribed parses one subscript: an expression or a slice. A slice
// comes back as nSlice with b, c, list[0] holding start, stop, step.
func (p *parser) parseSubscribed() (*node, error) {
	var start *node
	if !p.isOp(":") {
		e, err := p.parseExpression(true)
		if err != nil {
			return nil, err
		}
		if !p.isOp(":") {
			return e, nil
		}
		start = e
	}
	p.pos++ // ':'
	s := &node{kind: nSlice, b: start, list: []*node{nil}, line: p.line}
	if !p.isOp(":") && !p.isOp("]") && !p.isOp(",") {
		e, err := p.parseExpression(true)
		if err != nil {
			return nil, err
		}
		s.c = e
	}
	if p.skipOp(":") && !p.isOp("]") && !p.isOp(",") {
		e, err := p.parseExpression(true)
		if err != nil {
			return nil, err
		}
		s.list[0] = e
	}
	return s, nil
}

func (p *parser) parseCallArgs(n *node) error {
	if err := p.expectOp("("); err != nil {
		return err
	}
	first := true
	for !p.isOp(")") {
		if !first {
			if err := p.expectOp(","); err != nil {
				return err
			}
			if p.isOp(")") {
				break
			}
		}
		first = false
		if p.isOp("*") || p.isOp("**") {
			return p.errorf("*args and **kwargs in calls are not supported")
		}
		if p.peek().kind == tName && p.look().is(tOp, "=") {
			name := p.next().s
			p.pos++
			v, err := p.parseExpression(true)
			if err != nil {
				return err
			}
			n.kws = append(n.kws, kwarg{name: name, val: v})
			continue
		}
		if len(n.kws) > 0 {
			return p.errorf("positional argument follows keyword argument")
		}
		v, err := p.parseExpression(true)
		if err != nil {
			return err
		}
		n.list = append(n.list, v)
	}
	return p.expectOp(")")
}

func (p *parser) parseCall(callee *node) (*node, error) {
	n := &node{kind: nCall, a: callee, line: callee.line}
	if err := p.parseCallArgs(n); err != nil {
		return nil, err
	}
	return n, nil
}

// parseFilter parses "| name(args)" repeatedly; with startInline the first
// filter has no leading "|" (the {% filter %} tag).
func (p *parser) parseFilter(operand *node, startInline bool) (*node, error) {
	n := operand
	for p.isOp("|") || startInline {
		if !startInline {
			p.pos++
		}
		startInline = false
		name, err := p.dottedName()
		if err != nil {
			return nil, err
		}
		f := &node{kind: nFilter, a: n, op: name, line: p.line}
		if p.isOp("(") {
			if err := p.parseCallArgs(f); err != nil {
				return nil, err
			}
		}
		n = f
	}
	return n, nil
}

func (p *parser) dottedName() (string, error) {
	name, err := p.expectName()
	if err != nil {
		return "", err
	}
	for p.skipOp(".") {
		part, err := p.expectName()
		if err != nil {
			return "", err
		}
		name += "." + part
	}
	return name, nil
}

func (p *parser) parseTest(operand *node) (*node, error) {
	p.pos++ // "is"
	negated := p.skipName("not")
	name, err := p.dottedName()
	if err != nil {
		return nil, err
	}
	t := &node{kind: nTest, a: operand, op: name, line: operand.line}
	switch tk := p.peek(); {
	case p.isOp("("):
		if err := p.parseCallArgs(t); err != nil {
			return nil, err
		}
	case (tk.kind == tName || tk.kind == tString || tk.kind == tInt || tk.kind == tFloat ||
		p.isOp("[") || p.isOp("{")) && !p.isName("else") && !p.isName("or") && !p.isName("and"):
		if p.isName("is") {
			return nil, p.errorf("you cannot chain multiple tests with is")
		}
		arg, err := p.parsePrimary()
		if err != nil {
			return nil, err
		}
		if arg, err = p.parsePostfix(arg); err != nil {
			return nil, err
		}
		t.list = []*node{arg}
	}
	if negated {
		return &node{kind: nNot, a: t, line: t.line}, nil
	}
	return t, nil
}

// ---- emission -------------------------------------------------------------

// Names of the functions the rewritten template calls; see guard.go.
const (
	hookPrefix = "__churon_"
	fnOut      = hookPrefix + "out"
	fnTick     = hookPrefix + "tick"
	fnEnter    = hookPrefix + "enter"
	fnLeave    = hookPrefix + "leave"
	fnNSCheck  = hookPrefix + "nscheck"
	fnMul      = hookPrefix + "mul"
	fnPow      = hookPrefix + "pow"
	fnAdd      = hookPrefix + "add"
	fnSub      = hookPrefix + "sub"
	fnDiv      = hookPrefix + "div"
	fnFloorDiv = hookPrefix + "floordiv"
	fnMod      = hookPrefix + "mod"
	fnConcat   = hookPrefix + "concat"
	fnToJSON   = hookPrefix + "tojson"
	fnStr      = hookPrefix + "str"
	fnWidth    = hookPrefix + "width"
	fnUnsafe   = hookPrefix + "unsafe"
	fnFilter   = hookPrefix + "filter"
	fnMethod   = hookPrefix + "method"
	nameUndef  = hookPrefix + "undefined" // never defined: reads as undefined
)

// unsafeMethods are the methods of mutable containers that Jinja2's
// ImmutableSandboxedEnvironment refuses (jinja2/sandbox.py _mutable_spec).
// Refusing them also keeps templates from building cyclic values, which
// would send the engine's printer into endless recursion.
var unsafeMethods = map[string]bool{
	"append": true, "clear": true, "pop": true, "reverse": true, "insert": true, "sort": true,
	"extend": true, "remove": true, "popitem": true, "setdefault": true, "update": true,
	"add": true, "discard": true, "difference_update": true, "symmetric_difference_update": true,
	"intersection_update": true, "appendleft": true, "extendleft": true, "popleft": true, "rotate": true,
}

// arithHooks are the operators computed by the guard, with Python's
// semantics and bounds: the engine's versions repeat and concatenate
// strings without limit, add a string to anything, truncate where Python
// floors and divide by zero without complaint.
var arithHooks = map[string]string{
	"+": fnAdd, "-": fnSub, "*": fnMul, "**": fnPow, "/": fnDiv, "//": fnFloorDiv, "%": fnMod,
}

// widthFilters take a count that the engine turns into a repeated string.
var widthFilters = map[string]string{"indent": "width", "center": "width"}

type emitter struct {
	b        strings.Builder
	internal bool
}

func (e *emitter) s(s string) { e.b.WriteString(s) }

func emitExpr(n *node) (string, error) {
	var e emitter
	if err := e.expr(n); err != nil {
		return "", err
	}
	return e.b.String(), nil
}

// emitExprInternal emits an expression that may name the translator's own
// variables (they start with hookPrefix, which templates may not use).
func emitExprInternal(n *node) (string, error) {
	e := emitter{internal: true}
	if err := e.expr(n); err != nil {
		return "", err
	}
	return e.b.String(), nil
}

// isAtomic nodes are emitted without surrounding parentheses.
func isAtomic(n *node) bool {
	switch n.kind {
	case nName, nConst, nList, nTuple, nDict, nGetAttr, nGetItem, nSlice, nCall:
		return true
	case nFilter:
		return n.op == "tojson" || n.op == "string" || hookedFilters[n.op]
	}
	return false
}

func (e *emitter) wrapped(n *node) error {
	if isAtomic(n) {
		return e.expr(n)
	}
	e.s("(")
	if err := e.expr(n); err != nil {
		return err
	}
	e.s(")")
	return nil
}

func (e *emitter) args(n *node, wrapFirstAs string) error {
	for i, a := range n.list {
		if i > 0 {
			e.s(", ")
		}
		if i == 0 && wrapFirstAs != "" {
			e.s(fnWidth + "(")
			if err := e.expr(a); err != nil {
				return err
			}
			e.s(")")
			continue
		}
		if err := e.expr(a); err != nil {
			return err
		}
	}
	for i, kw := range n.kws {
		if i > 0 || len(n.list) > 0 {
			e.s(", ")
		}
		e.s(kw.name + "=")
		if kw.name == wrapFirstAs && wrapFirstAs != "" {
			e.s(fnWidth + "(")
			if err := e.expr(kw.val); err != nil {
				return err
			}
			e.s(")")
			continue
		}
		if err := e.expr(kw.val); err != nil {
			return err
		}
	}
	return nil
}

func (e *emitter) expr(n *node) error {
	switch n.kind {
	case nName:
		if strings.HasPrefix(n.op, hookPrefix) && !e.internal {
			return fmt.Errorf("line %d: the name %q is reserved", n.line, n.op)
		}
		e.s(n.op)
	case nConst:
		e.s(constLiteral(n))
	case nList, nTuple:
		e.s(pick(n.kind == nList, "[", "("))
		for i, it := range n.list {
			if i > 0 {
				e.s(", ")
			}
			if err := e.expr(it); err != nil {
				return err
			}
		}
		switch {
		case n.kind == nList:
			e.s("]")
		case len(n.list) == 1:
			e.s(",)")
		default:
			e.s(")")
		}
	case nDict:
		// The spaces keep "{{" and "}}" out of the output: ardanlabs/jinja
		// ends a tag at the first "}}" whatever it is inside.
		e.s("{ ")
		for i, kv := range n.pairs {
			if i > 0 {
				e.s(", ")
			}
			if err := e.expr(kv[0]); err != nil {
				return err
			}
			e.s(": ")
			if err := e.expr(kv[1]); err != nil {
				return err
			}
		}
		e.s(" }")
	case nGetAttr:
		if unsafeMethods[n.op] {
			e.s(fnUnsafe + "(" + quoteLiteral(n.op) + ")")
			return nil
		}
		if err := e.wrapped(n.a); err != nil {
			return err
		}
		e.s("." + n.op)
	case nGetItem:
		if err := e.wrapped(n.a); err != nil {
			return err
		}
		e.s("[")
		if err := e.expr(n.b); err != nil {
			return err
		}
		e.s("]")
	case nSlice:
		if err := e.wrapped(n.a); err != nil {
			return err
		}
		e.s("[")
		for i, part := range []*node{n.b, n.c, n.list[0]} {
			if i > 0 {
				e.s(":")
			}
			if part != nil {
				if err := e.expr(part); err != nil {
					return err
				}
			}
		}
		e.s("]")
	case nCall:
		if n.a.kind == nGetAttr && hookedMethods[n.a.op] {
			e.s(fnMethod + "(" + quoteLiteral(n.a.op) + ", ")
			if err := e.expr(n.a.a); err != nil {
				return err
			}
			if len(n.list) > 0 || len(n.kws) > 0 {
				e.s(", ")
				if err := e.args(n, ""); err != nil {
					return err
				}
			}
			e.s(")")
			return nil
		}
		if err := e.wrapped(n.a); err != nil {
			return err
		}
		e.s("(")
		if err := e.args(n, ""); err != nil {
			return err
		}
		e.s(")")
	case nFilter:
		return e.filter(n)
	case nTest:
		if err := e.wrapped(n.a); err != nil {
			return err
		}
		e.s(" is " + n.op)
		if len(n.list) > 0 || len(n.kws) > 0 {
			e.s("(")
			if err := e.args(n, ""); err != nil {
				return err
			}
			e.s(")")
		}
	case nNot:
		e.s("not ")
		return e.wrapped(n.a)
	case nNeg, nPos:
		e.s(pick(n.kind == nNeg, "-", "+"))
		return e.wrapped(n.a)
	case nBinary:
		if fn := arithHooks[n.op]; fn != "" {
			e.s(fn + "(")
			if err := e.expr(n.a); err != nil {
				return err
			}
			e.s(", ")
			if err := e.expr(n.b); err != nil {
				return err
			}
			e.s(")")
			return nil
		}
		if err := e.wrapped(n.a); err != nil {
			return err
		}
		e.s(" " + n.op + " ")
		return e.wrapped(n.b)
	case nConcat:
		e.s(fnConcat + "(")
		for i, it := range n.list {
			if i > 0 {
				e.s(", ")
			}
			if err := e.expr(it); err != nil {
				return err
			}
		}
		e.s(")")
	case nCompare:
		// Jinja2 chains comparisons: a < b < c means a < b and b < c.
		if len(n.ops) > 1 {
			e.s("(")
		}
		left := n.a
		for i, op := range n.ops {
			if i > 0 {
				e.s(") and (")
			}
			if err := e.wrapped(left); err != nil {
				return err
			}
			e.s(" " + op + " ")
			if err := e.wrapped(n.list[i]); err != nil {
				return err
			}
			left = n.list[i]
		}
		if len(n.ops) > 1 {
			e.s(")")
		}
	case nCondExpr:
		if err := e.wrapped(n.a); err != nil {
			return err
		}
		e.s(" if ")
		if err := e.wrapped(n.b); err != nil {
			return err
		}
		e.s(" else ")
		if n.c == nil {
			e.s(nameUndef)
			return nil
		}
		return e.wrapped(n.c)
	default:
		return fmt.Errorf("line %d: internal error: node kind %d", n.line, n.kind)
	}
	return nil
}

func (e *emitter) filter(n *node) error {
	if hookedFilters[n.op] && n.a != nil {
		e.s(fnFilter + "(" + quoteLiteral(n.op) + ", ")
		if err := e.expr(n.a); err != nil {
			return err
		}
		if len(n.list) > 0 || len(n.kws) > 0 {
			e.s(", ")
			if err := e.args(n, ""); err != nil {
				return err
			}
		}
		e.s(")")
		return nil
	}
	switch n.op {
	case "tojson", "string":
		if n.a == nil {
			return fmt.Errorf("line %d: the %s filter is not supported in a filter block", n.line, n.op)
		}
		e.s(pick(n.op == "tojson", fnToJSON, fnStr) + "(")
		if err := e.expr(n.a); err != nil {
			return err
		}
		if len(n.list) > 0 || len(n.kws) > 0 {
			e.s(", ")
			if err := e.args(n, ""); err != nil {
				return err
			}
		}
		e.s(")")
		return nil
	}
	if n.a != nil {
		if err := e.wrapped(n.a); err != nil {
			return err
		}
		e.s(" | ")
	}
	e.s(n.op)
	if len(n.list) > 0 || len(n.kws) > 0 {
		e.s("(")
		if err := e.args(n, widthFilters[n.op]); err != nil {
			return err
		}
		e.s(")")
	}
	return nil
}

func pick(cond bool, a, b string) string {
	if cond {
		return a
	}
	return b
}

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
