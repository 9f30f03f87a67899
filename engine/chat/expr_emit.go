package chat

import (
	"fmt"
	"strings"
)

// emitter writes an expression tree back out as ardanlabs/jinja source,
// fully parenthesised, with the hooked operations routed through the
// guard's functions (hooks.go). The first error sticks: everything after
// it writes nothing, and emit returns it.
type emitter struct {
	b        strings.Builder
	internal bool // the translator's own names (hookPrefix) are allowed
	err      error
}

func (e *emitter) s(s string) { e.b.WriteString(s) }

func (e *emitter) fail(err error) {
	if e.err == nil {
		e.err = err
	}
}

// emitExpr emits an expression of the template.
func emitExpr(n *node) (string, error) { return emit(n, false) }

// emitExprInternal emits an expression that may name the translator's own
// variables (they start with hookPrefix, which templates may not use).
func emitExprInternal(n *node) (string, error) { return emit(n, true) }

func emit(n *node, internal bool) (string, error) {
	e := emitter{internal: internal}
	e.expr(n)
	if e.err != nil {
		return "", e.err
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

// wrapped emits n, in parentheses unless it is atomic.
func (e *emitter) wrapped(n *node) {
	if isAtomic(n) {
		e.expr(n)
		return
	}
	e.s("(")
	e.expr(n)
	e.s(")")
}

// args emits n's arguments, positional then keyword, comma-separated.
// The first positional argument, or the keyword argument named
// wrapFirstAs, goes through fnWidth (see widthFilters).
func (e *emitter) args(n *node, wrapFirstAs string) {
	for i, a := range n.list {
		if i > 0 {
			e.s(", ")
		}
		e.arg(a, i == 0 && wrapFirstAs != "")
	}
	for i, kw := range n.kws {
		if i > 0 || len(n.list) > 0 {
			e.s(", ")
		}
		e.s(kw.name + "=")
		e.arg(kw.val, kw.name == wrapFirstAs && wrapFirstAs != "")
	}
}

// arg emits one argument, through fnWidth if width.
func (e *emitter) arg(a *node, width bool) {
	if !width {
		e.expr(a)
		return
	}
	e.s(fnWidth + "(")
	e.expr(a)
	e.s(")")
}

// optionalArgs emits n's arguments in parentheses, if it has any (a
// filter or test without them is written bare).
func (e *emitter) optionalArgs(n *node, wrapFirstAs string) {
	if len(n.list) == 0 && len(n.kws) == 0 {
		return
	}
	e.s("(")
	e.args(n, wrapFirstAs)
	e.s(")")
}

// hookCall emits a call of a guard function: head (the function's name,
// its "(" and any leading arguments), then the operand, then n's
// arguments.
func (e *emitter) hookCall(head string, operand, n *node) {
	e.s(head)
	e.expr(operand)
	if len(n.list) > 0 || len(n.kws) > 0 {
		e.s(", ")
		e.args(n, "")
	}
	e.s(")")
}

// list emits ns comma-separated.
func (e *emitter) list(ns []*node) {
	for i, it := range ns {
		if i > 0 {
			e.s(", ")
		}
		e.expr(it)
	}
}

// expr emits any node.
func (e *emitter) expr(n *node) {
	if e.err != nil {
		return
	}
	switch n.kind {
	case nName:
		if strings.HasPrefix(n.op, hookPrefix) && !e.internal {
			e.fail(fmt.Errorf("line %d: the name %q is reserved", n.line, n.op))
			return
		}
		e.s(n.op)
	case nConst:
		e.s(constLiteral(n))
	case nList, nTuple:
		e.s(pick(n.kind == nList, "[", "("))
		e.list(n.list)
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
			e.expr(kv[0])
			e.s(": ")
			e.expr(kv[1])
		}
		e.s(" }")
	case nGetAttr:
		if unsafeMethods[n.op] {
			e.s(fnUnsafe + "(" + quoteLiteral(n.op) + ")")
			return
		}
		e.wrapped(n.a)
		e.s("." + n.op)
	case nGetItem:
		e.wrapped(n.a)
		e.s("[")
		e.expr(n.b)
		e.s("]")
	case nSlice:
		e.wrapped(n.a)
		e.s("[")
		for i, part := range []*node{n.b, n.c, n.list[0]} {
			if i > 0 {
				e.s(":")
			}
			if part != nil {
				e.expr(part)
			}
		}
		e.s("]")
	case nCall:
		if n.a.kind == nGetAttr && hookedMethods[n.a.op] {
			e.hookCall(fnMethod+"("+quoteLiteral(n.a.op)+", ", n.a.a, n)
			return
		}
		e.wrapped(n.a)
		e.s("(")
		e.args(n, "")
		e.s(")")
	case nFilter:
		e.filter(n)
	case nTest:
		e.wrapped(n.a)
		e.s(" is " + n.op)
		e.optionalArgs(n, "")
	case nNot:
		e.s("not ")
		e.wrapped(n.a)
	case nNeg, nPos:
		e.s(pick(n.kind == nNeg, "-", "+"))
		e.wrapped(n.a)
	case nBinary:
		if fn := arithHooks[n.op]; fn != "" {
			e.s(fn + "(")
			e.list([]*node{n.a, n.b})
			e.s(")")
			return
		}
		e.wrapped(n.a)
		e.s(" " + n.op + " ")
		e.wrapped(n.b)
	case nConcat:
		e.s(fnConcat + "(")
		e.list(n.list)
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
			e.wrapped(left)
			e.s(" " + op + " ")
			e.wrapped(n.list[i])
			left = n.list[i]
		}
		if len(n.ops) > 1 {
			e.s(")")
		}
	case nCondExpr:
		e.wrapped(n.a)
		e.s(" if ")
		e.wrapped(n.b)
		e.s(" else ")
		if n.c == nil {
			e.s(nameUndef)
			return
		}
		e.wrapped(n.c)
	default:
		e.fail(fmt.Errorf("line %d: internal error: node kind %d", n.line, n.kind))
	}
}

// filter emits an nFilter: through the guard for the hooked filters,
// tojson and string, else as the engine's own filter.
func (e *emitter) filter(n *node) {
	if hookedFilters[n.op] && n.a != nil {
		e.hookCall(fnFilter+"("+quoteLiteral(n.op)+", ", n.a, n)
		return
	}
	switch n.op {
	case "tojson", "string":
		if n.a == nil {
			e.fail(fmt.Errorf("line %d: the %s filter is not supported in a filter block", n.line, n.op))
			return
		}
		e.hookCall(pick(n.op == "tojson", fnToJSON, fnStr)+"(", n.a, n)
		return
	}
	if n.a != nil {
		e.wrapped(n.a)
		e.s(" | ")
	}
	e.s(n.op)
	e.optionalArgs(n, widthFilters[n.op])
}
