package chat

import (
	"fmt"
	"strconv"
)

// parser walks the tokens of one tag (an expression, or a statement's
// words): the cursor, lookahead, expectations with line-numbered errors,
// and the nesting bound. The expression grammar is in expr_parse.go; the
// statements' in translate.go.
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
