package chat

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ardanlabs/jinja"
)

// The select family and map are common in chat templates and the engine's
// versions fail them in ways that matter: selectattr without a test panics,
// map('upper') returns its input unchanged, dotted attribute paths are not
// followed. The translated template calls these instead.

// hookedFilters are routed to guard.filter.
var hookedFilters = map[string]bool{"select": true, "reject": true, "selectattr": true, "rejectattr": true, "map": true, "round": true}

// hookedMethods are routed to guard.method.
var hookedMethods = map[string]bool{"join": true}

// namedHook checks the call of a hook that the emitter passes a name
// (of a filter or method), an operand and the rest of the arguments, and
// splits them up.
func (g *guard) namedHook(hook string, args []jinja.Value) (name string, operand jinja.Value, rest []jinja.Value, err error) {
	if err := g.check(); err != nil {
		return "", operand, nil, err
	}
	if len(args) < 2 || !args[0].IsString() {
		return "", operand, nil, fmt.Errorf("internal error: bad %s hook call", hook)
	}
	return args[0].AsString(), args[1], args[2:], nil
}

// filter runs a hooked filter (hookedFilters) on seq.
func (g *guard) filter(args []jinja.Value, kwargs map[string]jinja.Value) (jinja.Value, error) {
	name, seq, rest, err := g.namedHook("filter", args)
	if err != nil {
		return g.fail(err)
	}
	if name == "round" {
		v, err := pyRound(seq, rest, kwargs)
		if err != nil {
			return g.fail(err)
		}
		return v, nil
	}
	items, err := iterate(seq)
	if err != nil {
		return g.fail(fmt.Errorf("%s: %w", name, err))
	}
	g.iterations += len(items)
	var out []jinja.Value
	switch name {
	case "select", "reject":
		want := name == "select"
		for _, it := range items {
			ok, err := applyTest(it, rest)
			if err != nil {
				return g.fail(fmt.Errorf("%s: %w", name, err))
			}
			if ok == want {
				out = append(out, it)
			}
		}
	case "selectattr", "rejectattr":
		if len(rest) == 0 {
			return g.fail(fmt.Errorf("%s: missing attribute name", name))
		}
		want := name == "selectattr"
		for _, it := range items {
			ok, err := applyTest(getAttrPath(it, pyStr(rest[0])), rest[1:])
			if err != nil {
				return g.fail(fmt.Errorf("%s: %w", name, err))
			}
			if ok == want {
				out = append(out, it)
			}
		}
	case "map":
		if attr, ok := kwargs["attribute"]; ok {
			def, hasDef := kwargs["default"]
			for _, it := range items {
				v := getAttrPath(it, pyStr(attr))
				if v.IsUndefined() && hasDef {
					v = def
				}
				out = append(out, v)
			}
			break
		}
		if len(rest) == 0 || !rest[0].IsString() {
			return g.fail(errors.New("map: expected a filter name or attribute="))
		}
		for _, it := range items {
			v, err := g.mapFilter(rest[0].AsString(), it, rest[1:])
			if err != nil {
				return g.fail(fmt.Errorf("map: %w", err))
			}
			out = append(out, v)
		}
	default:
		return g.fail(fmt.Errorf("internal error: filter %q is not hooked", name))
	}
	if out == nil {
		out = []jinja.Value{}
	}
	return jinja.NewList(out), nil
}

// pyRound is Jinja2's round filter: round(value, precision=0,
// method='common'), where common is Python's round (ties to even, on the
// float's exact value), and ceil and floor round up and down.
func pyRound(v jinja.Value, args []jinja.Value, kwargs map[string]jinja.Value) (jinja.Value, error) {
	if !isNumber(v) {
		return jinja.Value{}, fmt.Errorf("round: %s is not a number", pyTypeName(v))
	}
	precision, method := int64(0), "common"
	if len(args) > 0 {
		precision, _ = intArg(args[0])
	}
	if p, ok := kwargs["precision"]; ok {
		precision, _ = intArg(p)
	}
	if len(args) > 1 {
		method = pyStr(args[1])
	}
	if m, ok := kwargs["method"]; ok {
		method = pyStr(m)
	}
	if precision > 300 || precision < -300 {
		return jinja.Value{}, fmt.Errorf("round: precision %d out of range", precision)
	}
	x := toFloat(v)
	scale := math.Pow(10, float64(precision))
	switch method {
	case "common":
		if v.IsInt() || v.IsBool() {
			if precision >= 0 {
				n, _ := intArg(v)
				return jinja.NewInt(n), nil
			}
			return jinja.NewInt(int64(math.RoundToEven(x/math.Pow(10, float64(-precision))) * math.Pow(10, float64(-precision)))), nil
		}
		if precision >= 0 {
			r, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'f', int(precision), 64), 64)
			return jinja.NewFloat(r), nil
		}
		p := math.Pow(10, float64(-precision))
		return jinja.NewFloat(math.RoundToEven(x/p) * p), nil
	case "ceil":
		return jinja.NewFloat(math.Ceil(x*scale) / scale), nil
	case "floor":
		return jinja.NewFloat(math.Floor(x*scale) / scale), nil
	}
	return jinja.Value{}, errors.New("round: method must be 'common', 'ceil' or 'floor'")
}

// mapFilter applies the filters map('name') is commonly given.
func (g *guard) mapFilter(name string, v jinja.Value, args []jinja.Value) (jinja.Value, error) {
	switch name {
	case "upper", "lower", "title", "capitalize", "trim":
		s := pyStr(v)
		switch name {
		case "upper":
			s = strings.ToUpper(s)
		case "lower":
			s = strings.ToLower(s)
		case "trim":
			s = strings.TrimFunc(s, isPySpace)
		case "capitalize":
			s = strings.ToLower(s)
			if r, n := utf8.DecodeRuneInString(s); n > 0 {
				s = string(unicode.ToUpper(r)) + s[n:]
			}
		case "title":
			s = pyTitle(s)
		}
		return jinja.NewString(s), nil
	case "string":
		return jinja.NewString(pyStr(v)), nil
	case "tojson":
		o, err := toJSONArgs(args, nil)
		if err != nil {
			return jinja.Value{}, err
		}
		d := pyDumper{o: o, isNS: g.isNamespace, limit: g.strLimit}
		if err := d.dump(v, 0); err != nil {
			return jinja.Value{}, err
		}
		return jinja.NewString(d.b.String()), nil
	case "length", "count":
		items, err := iterate(v)
		if err != nil {
			return jinja.Value{}, err
		}
		return jinja.NewInt(int64(len(items))), nil
	case "int":
		switch {
		case v.IsInt():
			return v, nil
		case v.IsBool():
			n, _ := intArg(v)
			return jinja.NewInt(n), nil
		case v.IsFloat():
			return jinja.NewInt(int64(math.Trunc(v.AsFloat()))), nil
		case v.IsString():
			if n, err := strconv.ParseInt(strings.TrimSpace(v.AsString()), 10, 64); err == nil {
				return jinja.NewInt(n), nil
			}
		}
		return jinja.NewInt(0), nil
	case "float":
		if isNumber(v) {
			return jinja.NewFloat(toFloat(v)), nil
		}
		if v.IsString() {
			if f, err := strconv.ParseFloat(strings.TrimSpace(v.AsString()), 64); err == nil {
				return jinja.NewFloat(f), nil
			}
		}
		return jinja.NewFloat(0), nil
	case "first", "last":
		items, err := iterate(v)
		if err != nil || len(items) == 0 {
			return jinja.Undefined(), err
		}
		return items[pickInt(name == "first", 0, len(items)-1)], nil
	}
	return jinja.Value{}, fmt.Errorf("the filter %q is not supported inside map()", name)
}

func pickInt(cond bool, a, b int) int {
	if cond {
		return a
	}
	return b
}

// pyTitle is str.title: the first letter of each run of letters is
// upper-cased and the rest lower-cased.
func pyTitle(s string) string {
	var b strings.Builder
	prevLetter := false
	for _, r := range s {
		if unicode.IsLetter(r) {
			if prevLetter {
				b.WriteRune(unicode.ToLower(r))
			} else {
				b.WriteRune(unicode.ToTitle(r))
			}
			prevLetter = true
			continue
		}
		prevLetter = false
		b.WriteRune(r)
	}
	return b.String()
}

// method runs a hooked method (hookedMethods) of recv.
func (g *guard) method(args []jinja.Value, _ map[string]jinja.Value) (jinja.Value, error) {
	name, recv, rest, err := g.namedHook("method", args)
	if err != nil {
		return g.fail(err)
	}
	switch name {
	case "join":
		// str.join; nothing else in a template has a join method.
		if !recv.IsString() {
			return g.fail(fmt.Errorf("%s object has no attribute 'join'", pyTypeName(recv)))
		}
		if len(rest) != 1 {
			return g.fail(fmt.Errorf("str.join takes exactly one argument (%d given)", len(rest)))
		}
		items, err := iterate(rest[0])
		if err != nil {
			return g.fail(fmt.Errorf("str.join: %w", err))
		}
		parts := make([]string, len(items))
		n := 0
		for i, it := range items {
			if !it.IsString() {
				return g.fail(fmt.Errorf("str.join: sequence item %d: expected str instance, %s found", i, pyTypeName(it)))
			}
			parts[i] = it.AsString()
			n += len(parts[i]) + len(recv.AsString())
		}
		if err := g.checkSize(n, "string"); err != nil {
			return g.fail(err)
		}
		return jinja.NewString(strings.Join(parts, recv.AsString())), nil
	}
	return g.fail(fmt.Errorf("internal error: method %q is not hooked", name))
}

// iterate lists what a for loop over v visits: a list's items, a string's
// characters, a dict's keys; undefined yields nothing.
func iterate(v jinja.Value) ([]jinja.Value, error) {
	switch {
	case v.IsList():
		return v.AsList().Items, nil
	case v.IsString():
		var out []jinja.Value
		for _, r := range v.AsString() {
			out = append(out, jinja.NewString(string(r)))
		}
		return out, nil
	case v.IsDict():
		keys := v.AsDict().Keys
		out := make([]jinja.Value, len(keys))
		for i, k := range keys {
			out[i] = jinja.NewString(k)
		}
		return out, nil
	case v.IsUndefined():
		return nil, nil
	}
	return nil, fmt.Errorf("%s object is not iterable", pyTypeName(v))
}

// getAttrPath follows Jinja2's attribute paths ("function.name", "items.0").
func getAttrPath(v jinja.Value, path string) jinja.Value {
	for _, part := range strings.Split(path, ".") {
		switch {
		case v.IsDict():
			d, ok := v.AsDict().Get(part)
			if !ok {
				return jinja.Undefined()
			}
			v = d
		case v.IsList():
			i, err := strconv.Atoi(part)
			items := v.AsList().Items
			if err != nil || i < 0 || i >= len(items) {
				return jinja.Undefined()
			}
			v = items[i]
		default:
			return jinja.Undefined()
		}
	}
	return v
}

func pyTruthy(v jinja.Value) bool {
	switch {
	case v.IsUndefined(), v.IsNone():
		return false
	case v.IsBool():
		return v.AsBool()
	case v.IsInt():
		return v.AsInt() != 0
	case v.IsFloat():
		return v.AsFloat() != 0
	case v.IsString():
		return v.AsString() != ""
	case v.IsList():
		return v.AsList().Len() > 0
	case v.IsDict():
		return v.AsDict().Len() > 0
	}
	return true
}

// pyEqual is Python's == on template values.
func pyEqual(a, b jinja.Value) bool {
	switch {
	case isNumber(a) && isNumber(b):
		return toFloat(a) == toFloat(b)
	case a.IsString() && b.IsString():
		return a.AsString() == b.AsString()
	case a.IsNone() && b.IsNone(), a.IsUndefined() && b.IsUndefined():
		return true
	case a.IsList() && b.IsList():
		x, y := a.AsList().Items, b.AsList().Items
		if len(x) != len(y) {
			return false
		}
		for i := range x {
			if !pyEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	case a.IsDict() && b.IsDict():
		x, y := a.AsDict(), b.AsDict()
		if x.Len() != y.Len() {
			return false
		}
		for _, k := range x.Keys {
			w, ok := y.Get(k)
			if !ok || !pyEqual(x.Data[k], w) {
				return false
			}
		}
		return true
	}
	return false
}

// pyCompare orders numbers and strings as Python does; ok is false for
// values Python refuses to order.
func pyCompare(a, b jinja.Value) (c int, ok bool) {
	switch {
	case isNumber(a) && isNumber(b):
		x, y := toFloat(a), toFloat(b)
		switch {
		case x < y:
			return -1, true
		case x > y:
			return 1, true
		}
		return 0, true
	case a.IsString() && b.IsString():
		return strings.Compare(a.AsString(), b.AsString()), true
	}
	return 0, false
}

// applyTest runs the Jinja2 test named by args[0] (with args[1:]) on v;
// no test means truthiness.
func applyTest(v jinja.Value, args []jinja.Value) (bool, error) {
	if len(args) == 0 {
		return pyTruthy(v), nil
	}
	if !args[0].IsString() {
		return false, errors.New("test name must be a string")
	}
	name, targs := args[0].AsString(), args[1:]
	arg := func() (jinja.Value, error) {
		if len(targs) != 1 {
			return jinja.Value{}, fmt.Errorf("test %q takes one argument", name)
		}
		return targs[0], nil
	}
	order := func(want func(int) bool) (bool, error) {
		o, err := arg()
		if err != nil {
			return false, err
		}
		c, ok := pyCompare(v, o)
		if !ok {
			return false, fmt.Errorf("'%s' not supported between %s and %s", name, pyTypeName(v), pyTypeName(o))
		}
		return want(c), nil
	}
	switch name {
	case "defined":
		return !v.IsUndefined(), nil
	case "undefined":
		return v.IsUndefined(), nil
	case "none":
		return v.IsNone(), nil
	case "boolean":
		return v.IsBool(), nil
	case "true":
		return v.IsBool() && v.AsBool(), nil
	case "false":
		return v.IsBool() && !v.AsBool(), nil
	case "integer":
		return v.IsInt(), nil
	case "float":
		return v.IsFloat(), nil
	case "number":
		return isNumber(v), nil
	case "string":
		return v.IsString(), nil
	case "mapping":
		return v.IsDict(), nil
	case "sequence", "iterable":
		return v.IsList() || v.IsString() || v.IsDict(), nil
	case "callable":
		return v.IsCallable(), nil
	case "lower", "upper":
		if !v.IsString() {
			return false, nil
		}
		s := v.AsString()
		return s == pick(name == "lower", strings.ToLower(s), strings.ToUpper(s)), nil
	case "odd", "even", "divisibleby":
		n, ok := intArg(v)
		if !ok {
			return false, fmt.Errorf("test %q needs an integer, got %s", name, pyTypeName(v))
		}
		switch name {
		case "odd":
			return n%2 != 0, nil
		case "even":
			return n%2 == 0, nil
		}
		o, err := arg()
		if err != nil {
			return false, err
		}
		d, ok := intArg(o)
		if !ok || d == 0 {
			return false, errors.New("divisibleby needs a non-zero integer")
		}
		return n%d == 0, nil
	case "eq", "equalto", "==", "ne", "!=", "sameas":
		o, err := arg()
		if err != nil {
			return false, err
		}
		eq := pyEqual(v, o)
		if name == "sameas" && (v.IsList() || v.IsDict()) {
			eq = sameObject(v, o)
		}
		if name == "ne" || name == "!=" {
			return !eq, nil
		}
		return eq, nil
	case "lt", "lessthan", "<":
		return order(func(c int) bool { return c < 0 })
	case "le", "<=":
		return order(func(c int) bool { return c <= 0 })
	case "gt", "greaterthan", ">":
		return order(func(c int) bool { return c > 0 })
	case "ge", ">=":
		return order(func(c int) bool { return c >= 0 })
	case "in":
		o, err := arg()
		if err != nil {
			return false, err
		}
		if o.IsString() && v.IsString() {
			return strings.Contains(o.AsString(), v.AsString()), nil
		}
		items, err := iterate(o)
		if err != nil {
			return false, err
		}
		for _, it := range items {
			if pyEqual(v, it) {
				return true, nil
			}
		}
		return false, nil
	}
	return false, fmt.Errorf("no test named %q", name)
}

func sameObject(a, b jinja.Value) bool {
	switch {
	case a.IsList() && b.IsList():
		return a.AsList() == b.AsList()
	case a.IsDict() && b.IsDict():
		return a.AsDict() == b.AsDict()
	}
	return false
}
