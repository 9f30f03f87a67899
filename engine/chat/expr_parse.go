package chat

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
)

// The grammar of Jinja2's expressions (jinja2/parser.py), one method per
// level from the loosest (conditional expressions) to the tightest
// (primaries, then subscripts, calls, filters and tests after them).

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

func (p *parser) parseOr() (*node, error) { return p.parseBinary(p.parseAnd, p.takeName("or")) }

func (p *parser) parseAnd() (*node, error) { return p.parseBinary(p.parseNot, p.takeName("and")) }

// parseBinary parses operand (op operand)... into left-associative
// nBinary nodes, for the operators op recognises (and consumes).
func (p *parser) parseBinary(operand func() (*node, error), op func() (string, bool)) (*node, error) {
	left, err := operand()
	if err != nil {
		return nil, err
	}
	for {
		o, ok := op()
		if !ok {
			return left, nil
		}
		right, err := operand()
		if err != nil {
			return nil, err
		}
		left = &node{kind: nBinary, op: o, a: left, b: right, line: left.line}
	}
}

// takeName matches the word operator w.
func (p *parser) takeName(w string) func() (string, bool) {
	return func() (string, bool) { return w, p.skipName(w) }
}

// takeOp matches any of the symbol operators ops.
func (p *parser) takeOp(ops ...string) func() (string, bool) {
	return func() (string, bool) {
		for _, o := range ops {
			if p.skipOp(o) {
				return o, true
			}
		}
		return "", false
	}
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
	return p.parseBinary(p.parseConcat, p.takeOp("+", "-"))
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
	return p.parseBinary(p.parsePow, p.takeOp("*", "/", "//", "%"))
}

func (p *parser) parsePow() (*node, error) {
	unary := func() (*node, error) { return p.parseUnary(true) }
	return p.parseBinary(unary, p.takeOp("**"))
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
	err := p.parseItems("[", "]", func() error {
		e, err := p.parseExpression(true)
		if err != nil {
			return err
		}
		n.list = append(n.list, e)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return n, nil
}

// parseItems parses open, then items separated by commas, with an
// optional trailing one, then close; item parses one item.
func (p *parser) parseItems(open, close string, item func() error) error {
	if err := p.expectOp(open); err != nil {
		return err
	}
	for first := true; !p.isOp(close); first = false {
		if !first {
			if err := p.expectOp(","); err != nil {
				return err
			}
			if p.isOp(close) {
				break
			}
		}
		if err := item(); err != nil {
			return err
		}
	}
	return p.expectOp(close)
}

func (p *parser) parseDict() (*node, error) {
	n := p.mk(nDict)
	err := p.parseItems("{", "}", func() error {
		k, err := p.parseExpression(true)
		if err != nil {
			return err
		}
		if err := p.expectOp(":"); err != nil {
			return err
		}
		v, err := p.parseExpression(true)
		if err != nil {
			return err
		}
		n.pairs = append(n.pairs, [2]*node{k, v})
		return nil
	})
	if err != nil {
		return nil, err
	}
	return n, nil
}

// parsePostfix parses the subscripts and calls after a primary.
func (p *parser) parsePostfix(n *node) (*node, error) { return p.parseTrailers(n, false) }

// parseFilterExpr parses the filters, tests and calls after a unary
// expression's postfix.
func (p *parser) parseFilterExpr(n *node) (*node, error) { return p.parseTrailers(n, true) }

// parseTrailers applies trailers to n while the cursor is at one: calls,
// and subscripts (filters false) or filters and tests (filters true).
func (p *parser) parseTrailers(n *node, filters bool) (*node, error) {
	for {
		var err error
		switch {
		case !filters && (p.isOp(".") || p.isOp("[")):
			n, err = p.parseSubscript(n)
		case filters && p.isOp("|"):
			n, err = p.parseFilter(n, false)
		case filters && p.isName("is"):
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
	return p.parseItems("(", ")", func() error {
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
			return nil
		}
		if len(n.kws) > 0 {
			return p.errorf("positional argument follows keyword argument")
		}
		v, err := p.parseExpression(true)
		if err != nil {
			return err
		}
		n.list = append(n.list, v)
		return nil
	})
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
