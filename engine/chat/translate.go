package chat

import (
	"fmt"
	"strings"
)

// translate turns lexed segments into the program ardanlabs/jinja compiles:
// text becomes string literals (whitespace already resolved), every output
// goes through the output hook, every loop iteration and macro call through
// a hook that checks the render's limits, and expressions are rewritten by
// expr.go. The program has no text segments at all, so the engine's own
// whitespace handling never fires.
func translate(segs []segment) (string, error) {
	tr := &translator{}
	for _, sg := range segs {
		switch sg.kind {
		case segText:
			tr.b.WriteString("{{ " + fnOut + "(" + quoteLiteral(sg.text) + ") }}")
		case segExpr:
			p := newParser(sg.toks, sg.line)
			n, err := p.parseTuple(true, false)
			if err != nil {
				return "", err
			}
			if !p.done() {
				return "", p.errorf("unexpected %s", describe(p.peek()))
			}
			code, err := emitExpr(n)
			if err != nil {
				return "", err
			}
			tr.b.WriteString("{{ " + fnOut + "(" + code + ") }}")
		case segStmt:
			if err := tr.stmt(sg); err != nil {
				return "", err
			}
		}
	}
	if n := len(tr.open); n > 0 {
		return "", fmt.Errorf("unexpected end of template: {%% %s %%} (line %d) is not closed", tr.open[n-1].kw, tr.open[n-1].line)
	}
	return tr.b.String(), nil
}

type openBlock struct {
	kw    string
	line  int
	after string // written after the closing tag
}

type translator struct {
	b     strings.Builder
	open  []openBlock
	names int // counter for generated variable names
}

func (tr *translator) name(kind string) string {
	tr.names++
	return fmt.Sprintf("%s%s%d", hookPrefix, kind, tr.names)
}

func (tr *translator) push(kw string, line int, after string) error {
	tr.open = append(tr.open, openBlock{kw: kw, line: line, after: after})
	if len(tr.open) > maxNesting {
		return fmt.Errorf("line %d: blocks nested deeper than %d", line, maxNesting)
	}
	return nil
}

// blockEnds maps each closing keyword to its opener.
var blockEnds = map[string]string{
	"endif": "if", "endfor": "for", "endmacro": "macro", "endcall": "call",
	"endfilter": "filter", "endset": "set", "endgeneration": "generation",
}

func (tr *translator) stmt(sg segment) error {
	if len(sg.toks) == 0 || sg.toks[0].kind != tName {
		return fmt.Errorf("line %d: expected a statement name", sg.line)
	}
	kw := sg.toks[0].s
	p := newParser(sg.toks[1:], sg.line)
	end := func() error {
		if !p.done() {
			return p.errorf("unexpected %s after %q", describe(p.peek()), kw)
		}
		return nil
	}
	// openBlock writes the translation of a block's opening tag and
	// opens the block.
	openBlock := func(code string, err error) error {
		if err != nil {
			return err
		}
		tr.b.WriteString(code)
		return tr.push(kw, sg.line, "")
	}
	if opener, ok := blockEnds[kw]; ok {
		if err := end(); err != nil {
			return err
		}
		n := len(tr.open)
		if n == 0 || tr.open[n-1].kw != opener {
			want := "no block is open"
			if n > 0 {
				want = fmt.Sprintf("expected the end of {%% %s %%} from line %d", tr.open[n-1].kw, tr.open[n-1].line)
			}
			return fmt.Errorf("line %d: unexpected {%% %s %%}: %s", sg.line, kw, want)
		}
		blk := tr.open[n-1]
		tr.open = tr.open[:n-1]
		switch kw {
		case "endmacro":
			tr.b.WriteString("{{ " + fnLeave + "() }}{% endmacro %}")
		case "endfilter":
			tr.b.WriteString("{% endset %}")
		default:
			tr.b.WriteString("{% " + kw + " %}")
		}
		tr.b.WriteString(blk.after)
		return nil
	}
	inside := func(kws ...string) bool {
		if n := len(tr.open); n > 0 {
			for _, k := range kws {
				if tr.open[n-1].kw == k {
					return true
				}
			}
		}
		return false
	}
	switch kw {
	case "if", "elif":
		if kw == "elif" && !inside("if") {
			return fmt.Errorf("line %d: {%% elif %%} outside an if block", sg.line)
		}
		n, err := p.parseTuple(false, false)
		if err != nil {
			return err
		}
		if err := end(); err != nil {
			return err
		}
		c, err := emitExpr(n)
		if err != nil {
			return err
		}
		tr.b.WriteString("{% " + kw + " " + c + " %}")
		if kw == "if" {
			return tr.push("if", sg.line, "")
		}
		return nil
	case "else":
		if !inside("if", "for") {
			return fmt.Errorf("line %d: {%% else %%} outside an if or for block", sg.line)
		}
		if err := end(); err != nil {
			return err
		}
		tr.b.WriteString("{% else %}")
		return nil
	case "break", "continue":
		if err := end(); err != nil {
			return err
		}
		tr.b.WriteString("{% " + kw + " %}")
		return nil
	case "generation":
		if err := end(); err != nil {
			return err
		}
		tr.b.WriteString("{% generation %}")
		return tr.push("generation", sg.line, "")
	case "for":
		return openBlock(translateFor(p))
	case "set":
		code, block, err := translateSet(p)
		if err != nil {
			return err
		}
		tr.b.WriteString(code)
		if block {
			return tr.push("set", sg.line, "")
		}
		return nil
	case "macro":
		return openBlock(tr.macro(p))
	case "call":
		return openBlock(tr.call(p))
	case "filter":
		// The engine's filter blocks ignore filter arguments, so the body
		// is captured into a variable and filtered as an expression.
		chain, err := p.parseFilter(nil, true)
		if err != nil {
			return err
		}
		if err := end(); err != nil {
			return err
		}
		v := tr.name("filter")
		root := chain
		for root.a != nil {
			root = root.a
		}
		root.a = &node{kind: nName, op: v, line: sg.line}
		c, err := emitExprInternal(chain)
		if err != nil {
			return err
		}
		tr.b.WriteString("{% set " + v + " %}")
		return tr.push("filter", sg.line, "{{ "+fnOut+"("+c+") }}")
	case "include", "import", "from", "extends":
		return fmt.Errorf("line %d: %w: templates cannot load other templates ({%% %s %%})", sg.line, ErrUnsafe, kw)
	case "raw", "endraw":
		return fmt.Errorf("line %d: malformed %s tag", sg.line, kw)
	}
	return fmt.Errorf("line %d: unsupported statement %q", sg.line, kw)
}

// targetNames parses a for loop's targets: names, optionally in parentheses.
func targetNames(p *parser, stop string) ([]string, error) {
	paren := p.skipOp("(")
	var names []string
	for {
		if paren && p.isOp(")") || !paren && p.isName(stop) {
			break
		}
		if len(names) > 0 {
			if err := p.expectOp(","); err != nil {
				return nil, err
			}
			if paren && p.isOp(")") || !paren && p.isName(stop) {
				// Jinja2 refuses "for a, in" and the engine cannot unpack
				// into a one-name tuple "(a,)".
				return nil, p.errorf("unsupported trailing comma in the loop variables")
			}
		}
		name, err := p.expectName()
		if err != nil {
			return nil, err
		}
		if err := checkName(p, name); err != nil {
			return nil, err
		}
		names = append(names, name)
	}
	if paren {
		if err := p.expectOp(")"); err != nil {
			return nil, err
		}
	}
	if len(names) == 0 {
		return nil, p.errorf("expected a loop variable")
	}
	return names, nil
}

func checkName(p *parser, name string) error {
	if strings.HasPrefix(name, hookPrefix) {
		return p.errorf("the name %q is reserved", name)
	}
	return nil
}

func translateFor(p *parser) (string, error) {
	names, err := targetNames(p, "in")
	if err != nil {
		return "", err
	}
	if len(names) > 2 {
		return "", p.errorf("for loops over more than two variables are not supported")
	}
	if !p.skipName("in") {
		return "", p.errorf("expected 'in', got %s", describe(p.peek()))
	}
	iter, err := p.parseTuple(false, false, "recursive")
	if err != nil {
		return "", err
	}
	var cond *node
	if p.skipName("if") {
		if cond, err = p.parseExpression(true); err != nil {
			return "", err
		}
	}
	recursive := p.skipName("recursive")
	if !p.done() {
		return "", p.errorf("unexpected %s in for loop", describe(p.peek()))
	}
	var b strings.Builder
	c, err := emitExpr(iter)
	if err != nil {
		return "", err
	}
	// Parentheses keep the engine's keyword search from finding an "if"
	// or "in" inside the expressions.
	b.WriteString("{% for " + strings.Join(names, ", ") + " in (" + c + ")")
	if cond != nil {
		c, err := emitExpr(cond)
		if err != nil {
			return "", err
		}
		b.WriteString(" if (" + c + ")")
	}
	if recursive {
		b.WriteString(" recursive")
	}
	b.WriteString(" %}{{ " + fnTick + "() }}")
	return b.String(), nil
}

// translateSet handles {% set x = v %}, {% set ns.attr = v %} and the
// block form {% set x %}...{% endset %} (block reports the latter).
func translateSet(p *parser) (code string, block bool, err error) {
	name, err := p.expectName()
	if err != nil {
		return "", false, err
	}
	if err := checkName(p, name); err != nil {
		return "", false, err
	}
	target, attr := name, ""
	if p.skipOp(".") {
		if attr, err = p.expectName(); err != nil {
			return "", false, err
		}
		target += "." + attr
	}
	if p.isOp(",") {
		return "", false, p.errorf("assigning to several names at once is not supported")
	}
	if !p.skipOp("=") {
		if !p.done() {
			return "", false, p.errorf("filtered set blocks are not supported")
		}
		if attr != "" {
			return "", false, p.errorf("set blocks cannot assign to a namespace attribute")
		}
		return "{% set " + target + " %}", true, nil
	}
	v, err := p.parseTuple(true, false)
	if err != nil {
		return "", false, err
	}
	if !p.done() {
		return "", false, p.errorf("unexpected %s in set", describe(p.peek()))
	}
	c, err := emitExpr(v)
	if err != nil {
		return "", false, err
	}
	code = "{% set " + target + " = " + c + " %}"
	if attr != "" {
		// Jinja2 only lets namespaces take attributes; the check also stops
		// a namespace from being made to contain itself.
		code += "{{ " + fnNSCheck + "(" + name + ") }}"
	}
	return code, false, nil
}

// isConstant reports literals and containers of literals.
func isConstant(n *node) bool {
	switch n.kind {
	case nConst:
		return true
	case nList, nTuple:
		for _, it := range n.list {
			if !isConstant(it) {
				return false
			}
		}
		return true
	case nDict:
		for _, kv := range n.pairs {
			if !isConstant(kv[0]) || !isConstant(kv[1]) {
				return false
			}
		}
		return true
	}
	return false
}

// signature parses "(a, b=default, ...)" and returns it re-emitted, with
// any statements that must precede it.
func (tr *translator) signature(p *parser, allowDefaults bool) (sig, pre string, err error) {
	if err := p.expectOp("("); err != nil {
		return "", "", err
	}
	var parts []string
	seenDefault := false
	for !p.isOp(")") {
		if len(parts) > 0 {
			if err := p.expectOp(","); err != nil {
				return "", "", err
			}
		}
		name, err := p.expectName()
		if err != nil {
			return "", "", err
		}
		if err := checkName(p, name); err != nil {
			return "", "", err
		}
		if !p.skipOp("=") {
			if seenDefault {
				return "", "", p.errorf("non-default argument follows default argument")
			}
			parts = append(parts, name)
			continue
		}
		if !allowDefaults {
			return "", "", p.errorf("default values are not supported here")
		}
		seenDefault = true
		d, err := p.parseExpression(true)
		if err != nil {
			return "", "", err
		}
		c, err := emitExpr(d)
		if err != nil {
			return "", "", err
		}
		if strings.Contains(c, ",") {
			// The engine splits a macro's parameters at every comma. A
			// literal default can live in a variable set just before the
			// macro (it cannot change, so evaluating it once is the same).
			if !isConstant(d) {
				return "", "", p.errorf("macro default values with commas must be literals")
			}
			v := tr.name("default")
			pre += "{% set " + v + " = " + c + " %}"
			c = v
		}
		parts = append(parts, name+"="+c)
	}
	if err := p.expectOp(")"); err != nil {
		return "", "", err
	}
	return "(" + strings.Join(parts, ", ") + ")", pre, nil
}

func (tr *translator) macro(p *parser) (string, error) {
	name, err := p.expectName()
	if err != nil {
		return "", err
	}
	if err := checkName(p, name); err != nil {
		return "", err
	}
	sig, pre, err := tr.signature(p, true)
	if err != nil {
		return "", err
	}
	if !p.done() {
		return "", p.errorf("unexpected %s after macro signature", describe(p.peek()))
	}
	return pre + "{% macro " + name + sig + " %}{{ " + fnEnter + "() }}", nil
}

func (tr *translator) call(p *parser) (string, error) {
	sig := ""
	if p.isOp("(") {
		var err error
		if sig, _, err = tr.signature(p, false); err != nil {
			return "", err
		}
	}
	n, err := p.parseExpression(true)
	if err != nil {
		return "", err
	}
	if n.kind != nCall {
		return "", p.errorf("expected a call in {%% call %%}")
	}
	if !p.done() {
		return "", p.errorf("unexpected %s in call block", describe(p.peek()))
	}
	c, err := emitExpr(n)
	if err != nil {
		return "", err
	}
	return "{% call" + sig + " " + c + " %}", nil
}
