package chat

import (
	"errors"
	"fmt"
	"math"
	"runtime/metrics"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/ardanlabs/jinja"
)

// Sandbox limits. The engine has no limits of its own; the translated
// program calls back into the guard at every output, loop iteration and
// macro call, and the guard stops the render from there.
const (
	maxTemplateSize = 1 << 20    // bytes of template source
	maxNesting      = 100        // brackets, expression depth, nested blocks
	maxMacroDepth   = 100        // macro calls in progress at once
	maxIterations   = 10_000_000 // loop iterations per render
	maxRange        = 100_000    // items per range(), Jinja2's sandbox MAX_RANGE
	maxIndent       = 1 << 10    // tojson indent, indent/center width
	maxListLen      = 1 << 20    // items in a list built by + or *
	minStringLimit  = 1 << 20    // strings built by *, + and ~ may reach max(this, 4*MaxOutput)
	heapCheckEvery  = 20 * time.Microsecond
)

// allocBudget is how many bytes a render may allocate, plus 64*MaxOutput.
// A variable so tests can exercise the limit without using that much.
var allocBudget uint64 = 256 << 20

// errStopped reports that the render's context ended; Render turns it
// into the context's error.
var errStopped = errors.New("chat: render stopped")

// guard is one render's sandbox state. Its hooks run on the render's
// goroutine only; stopped is the one field written from outside.
type guard struct {
	stopped atomic.Bool

	err        error // the first error a hook raised; later hooks return it again
	outBytes   int
	outLimit   int
	strLimit   int
	iterations int
	depth      int
	now        func() time.Time
	namespaces map[*jinja.Dict]bool

	allocStart uint64
	allocLimit uint64
	lastHeap   time.Time
	sample     []metrics.Sample
}

func newGuard(maxOutput int, now func() time.Time) *guard {
	g := &guard{
		// Output is counted where it is produced; a macro's output is
		// counted again where the macro's result is printed, hence slack.
		outLimit:   4 * maxOutput,
		strLimit:   max(minStringLimit, 4*maxOutput),
		now:        now,
		namespaces: map[*jinja.Dict]bool{},
		allocLimit: allocBudget + 64*uint64(maxOutput),
		sample:     []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}},
	}
	g.allocStart = g.allocated()
	g.lastHeap = time.Now()
	return g
}

func (g *guard) allocated() uint64 {
	metrics.Read(g.sample)
	if g.sample[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return g.sample[0].Value.Uint64()
}

// fail records err as the render's error and returns it to the engine.
func (g *guard) fail(err error) (jinja.Value, error) {
	if g.err == nil {
		g.err = err
	}
	return jinja.Undefined(), g.err
}

func limitf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrLimit, fmt.Sprintf(format, args...))
}

// check is called by every hook: it stops the render once the context is
// done or too much memory went by. Heap growth is the one limit that also
// covers strings the engine builds by itself (s + s in a loop doubles
// them); it is read from the runtime at most every heapCheckEvery, which
// keeps its cost low and still catches growth that has to slow each step.
func (g *guard) check() error {
	if g.err != nil {
		return g.err
	}
	if g.stopped.Load() {
		g.err = errStopped
		return g.err
	}
	if now := time.Now(); now.Sub(g.lastHeap) >= heapCheckEvery {
		g.lastHeap = now
		if a := g.allocated(); a > g.allocStart && a-g.allocStart > g.allocLimit {
			g.err = limitf("the render allocated more than %d MiB", g.allocLimit>>20)
			return g.err
		}
	}
	return nil
}

// functions returns the globals a translated template sees: Hugging Face's
// additions (raise_exception, strftime_now), Jinja2 globals whose engine
// versions are unbounded or differ (range, namespace), and the hooks.
func (g *guard) functions() map[string]jinja.Value {
	fns := map[string]func([]jinja.Value, map[string]jinja.Value) (jinja.Value, error){
		"raise_exception": g.raiseException,
		"strftime_now":    g.strftimeNow,
		"range":           g.rangeFn,
		"namespace":       g.namespaceFn,
		fnOut:             g.out,
		fnTick:            g.tick,
		fnEnter:           g.enter,
		fnLeave:           g.leave,
		fnNSCheck:         g.nscheck,
		fnMul:             g.mul,
		fnPow:             g.pow,
		fnAdd:             g.add,
		fnSub:             g.sub,
		fnDiv:             g.div,
		fnFloorDiv:        g.floorDiv,
		fnMod:             g.mod,
		fnConcat:          g.concat,
		fnToJSON:          g.tojson,
		fnStr:             g.str,
		fnWidth:           g.width,
		fnUnsafe:          g.unsafe,
		fnFilter:          g.filter,
		fnMethod:          g.method,
	}
	out := make(map[string]jinja.Value, len(fns))
	for name, fn := range fns {
		out[name] = jinja.NewCallable(name, fn)
	}
	return out
}

var empty = jinja.NewString("")

func arity(name string, args []jinja.Value, n int) error {
	if len(args) != n {
		return fmt.Errorf("%s expects %d argument(s), got %d", name, n, len(args))
	}
	return nil
}

func (g *guard) out(args []jinja.Value, _ map[string]jinja.Value) (jinja.Value, error) {
	if err := g.check(); err != nil {
		return g.fail(err)
	}
	if err := arity("output", args, 1); err != nil {
		return g.fail(err)
	}
	s := pyStr(args[0])
	g.outBytes += len(s)
	if g.outBytes > g.outLimit {
		return g.fail(ErrOutputTooLarge)
	}
	return jinja.NewString(s), nil
}

func (g *guard) tick([]jinja.Value, map[string]jinja.Value) (jinja.Value, error) {
	return g.bump(&g.iterations, maxIterations, "more than %d loop iterations")
}

func (g *guard) enter([]jinja.Value, map[string]jinja.Value) (jinja.Value, error) {
	return g.bump(&g.depth, maxMacroDepth, "macro calls nested deeper than %d (runaway recursion?)")
}

// bump counts one more of what a sandbox limit bounds, and stops the
// render past the limit (tooMany formats it).
func (g *guard) bump(counter *int, limit int, tooMany string) (jinja.Value, error) {
	if err := g.check(); err != nil {
		return g.fail(err)
	}
	*counter++
	if *counter > limit {
		return g.fail(limitf(tooMany, limit))
	}
	return empty, nil
}

func (g *guard) leave([]jinja.Value, map[string]jinja.Value) (jinja.Value, error) {
	g.depth--
	return empty, nil
}

func (g *guard) unsafe(args []jinja.Value, _ map[string]jinja.Value) (jinja.Value, error) {
	name := "?"
	if len(args) == 1 {
		name = pyStr(args[0])
	}
	return g.fail(fmt.Errorf("%w: method %q would modify a value (the sandbox keeps values immutable)", ErrUnsafe, name))
}

func (g *guard) raiseException(args []jinja.Value, _ map[string]jinja.Value) (jinja.Value, error) {
	msg := ""
	if len(args) > 0 {
		msg = pyStr(args[0])
	}
	return g.fail(&TemplateError{Message: msg})
}

func (g *guard) strftimeNow(args []jinja.Value, _ map[string]jinja.Value) (jinja.Value, error) {
	if err := arity("strftime_now", args, 1); err != nil {
		return g.fail(err)
	}
	if !args[0].IsString() {
		return g.fail(fmt.Errorf("strftime_now: format must be a string, not %s", pyTypeName(args[0])))
	}
	return jinja.NewString(pyStrftime(g.now(), args[0].AsString())), nil
}

func intArg(v jinja.Value) (int64, bool) {
	switch {
	case v.IsInt():
		return v.AsInt(), true
	case v.IsBool():
		if v.AsBool() {
			return 1, true
		}
		return 0, true
	}
	return 0, false
}

// rangeFn is Python's range() with the sandbox's MAX_RANGE.
func (g *guard) rangeFn(args []jinja.Value, _ map[string]jinja.Value) (jinja.Value, error) {
	if err := g.check(); err != nil {
		return g.fail(err)
	}
	if len(args) < 1 || len(args) > 3 {
		return g.fail(fmt.Errorf("range expected 1 to 3 arguments, got %d", len(args)))
	}
	var n [3]int64
	for i, a := range args {
		v, ok := intArg(a)
		if !ok {
			return g.fail(fmt.Errorf("range: %s object cannot be interpreted as an integer", pyTypeName(a)))
		}
		n[i] = v
	}
	start, stop, step := int64(0), n[0], int64(1)
	if len(args) >= 2 {
		start, stop = n[0], n[1]
	}
	if len(args) == 3 {
		step = n[2]
	}
	if step == 0 {
		return g.fail(errors.New("range() arg 3 must not be zero"))
	}
	var count float64
	if step > 0 && stop > start {
		count = math.Ceil((float64(stop) - float64(start)) / float64(step))
	} else if step < 0 && stop < start {
		count = math.Ceil((float64(start) - float64(stop)) / -float64(step))
	}
	if count > maxRange {
		return g.fail(limitf("range of %.0f items is larger than the sandbox's %d", count, maxRange))
	}
	items := make([]jinja.Value, 0, int(count))
	for i := start; (step > 0 && i < stop) || (step < 0 && i > stop); i += step {
		items = append(items, jinja.NewInt(i))
	}
	return jinja.NewList(items), nil
}

// namespaceFn is Jinja2's namespace(); the guard remembers the dicts it
// makes, the only ones a template may set attributes on.
func (g *guard) namespaceFn(args []jinja.Value, kwargs map[string]jinja.Value) (jinja.Value, error) {
	if err := g.check(); err != nil {
		return g.fail(err)
	}
	ns := jinja.NewDict()
	d := ns.AsDict()
	for _, a := range args {
		if !a.IsDict() {
			return g.fail(fmt.Errorf("namespace: positional argument must be a dict, not %s", pyTypeName(a)))
		}
		for _, k := range a.AsDict().Keys {
			d.Set(k, a.AsDict().Data[k])
		}
	}
	// The engine hands keyword arguments over in a Go map: their order is
	// lost, so sort them to at least be deterministic.
	keys := make([]string, 0, len(kwargs))
	for k := range kwargs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		d.Set(k, kwargs[k])
	}
	g.namespaces[d] = true
	return ns, nil
}

func (g *guard) isNamespace(d *jinja.Dict) bool { return g.namespaces[d] }

// nscheck runs after {% set ns.attr = value %}. Jinja2 refuses attributes
// on anything but a namespace; and a namespace must not end up inside
// itself, or printing it would recurse until the stack overflows.
func (g *guard) nscheck(args []jinja.Value, _ map[string]jinja.Value) (jinja.Value, error) {
	if err := g.check(); err != nil {
		return g.fail(err)
	}
	if len(args) != 1 || !args[0].IsDict() || !g.namespaces[args[0].AsDict()] {
		return g.fail(fmt.Errorf("%w: cannot assign attribute on a non-namespace object", ErrUnsafe))
	}
	target := args[0].AsDict()
	if g.reaches(target, args[0], true) {
		return g.fail(fmt.Errorf("%w: a namespace cannot contain itself", ErrUnsafe))
	}
	if g.iterations > maxIterations {
		return g.fail(limitf("more than %d loop iterations", maxIterations))
	}
	return empty, nil
}

// reaches reports whether target can be reached from v's contents. Each
// value visited counts as a loop iteration, so a template cannot make the
// check itself its way to run long.
func (g *guard) reaches(target *jinja.Dict, v jinja.Value, isRoot bool) bool {
	seen := map[any]bool{}
	stack := []jinja.Value{v}
	for len(stack) > 0 {
		g.iterations++
		cur := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		switch {
		case cur.IsList():
			l := cur.AsList()
			if seen[l] {
				continue
			}
			seen[l] = true
			stack = append(stack, l.Items...)
		case cur.IsDict():
			d := cur.AsDict()
			if d == target && !isRoot {
				return true
			}
			isRoot = false
			if seen[d] {
				continue
			}
			seen[d] = true
			for _, k := range d.Keys {
				stack = append(stack, d.Data[k])
			}
		}
	}
	return false
}

func (g *guard) checkSize(n int, what string) error {
	if n > g.strLimit {
		return limitf("%s of %d bytes is larger than %d", what, n, g.strLimit)
	}
	return nil
}

func isNumber(v jinja.Value) bool { return v.IsInt() || v.IsFloat() || v.IsBool() }

func toFloat(v jinja.Value) float64 {
	if v.IsFloat() {
		return v.AsFloat()
	}
	n, _ := intArg(v)
	return float64(n)
}

// mul is Python's "*": numbers multiply, a str or list times an int repeats.
func (g *guard) mul(args []jinja.Value, _ map[string]jinja.Value) (jinja.Value, error) {
	a, b, err := g.operands("*", args)
	if err != nil {
		return g.fail(err)
	}
	if isNumber(a) && isNumber(b) {
		if x, y, ok := ints(a, b); ok {
			r := x * y
			if x != 0 && (r/x != y || (x == -1 && y == math.MinInt64)) {
				return g.fail(limitf("integer product overflows 64 bits"))
			}
			return jinja.NewInt(r), nil
		}
		return jinja.NewFloat(toFloat(a) * toFloat(b)), nil
	}
	seq, count := a, b
	if _, ok := intArg(a); ok {
		seq, count = b, a
	}
	n, ok := intArg(count)
	if ok && (seq.IsString() || seq.IsList()) {
		n = max(n, 0)
		if seq.IsString() {
			s := seq.AsString()
			if n > 0 && len(s) > 0 && float64(len(s))*float64(n) > float64(g.strLimit) {
				return g.fail(limitf("string repetition of %.0f bytes is larger than %d", float64(len(s))*float64(n), g.strLimit))
			}
			return jinja.NewString(strings.Repeat(s, int(n))), nil
		}
		items := seq.AsList().Items
		if n > 0 && len(items) > 0 && float64(len(items))*float64(n) > float64(maxListLen) {
			return g.fail(limitf("list repetition of %.0f items is larger than %d", float64(len(items))*float64(n), maxListLen))
		}
		out := make([]jinja.Value, 0, len(items)*int(n))
		for range n {
			out = append(out, items...)
		}
		return jinja.NewList(out), nil
	}
	return g.fail(typeError("*", a, b))
}

// pow is Python's "**": an int to a non-negative int power stays an int.
func (g *guard) pow(args []jinja.Value, _ map[string]jinja.Value) (jinja.Value, error) {
	a, b, err := g.numbers("**", args)
	if err != nil {
		return g.fail(err)
	}
	if x, y, ok := ints(a, b); ok && y >= 0 {
		r, ok := intPow(x, y)
		if !ok {
			return g.fail(limitf("integer power %d ** %d overflows 64 bits", x, y))
		}
		return jinja.NewInt(r), nil
	}
	fx, fy := toFloat(a), toFloat(b)
	if fx == 0 && fy < 0 {
		return g.fail(errors.New("zero cannot be raised to a negative power"))
	}
	if fx < 0 && fy != math.Trunc(fy) {
		return g.fail(errors.New("a negative number raised to a fractional power has no real value"))
	}
	return jinja.NewFloat(math.Pow(fx, fy)), nil
}

// add is Python's "+": numbers add, strings and lists concatenate, and
// anything else (a string plus a number, say) is a TypeError.
func (g *guard) add(args []jinja.Value, _ map[string]jinja.Value) (jinja.Value, error) {
	a, b, err := g.operands("+", args)
	if err != nil {
		return g.fail(err)
	}
	switch {
	case isNumber(a) && isNumber(b):
		if x, y, ok := ints(a, b); ok {
			r := x + y
			if (r > x) != (y > 0) {
				return g.fail(limitf("integer sum overflows 64 bits"))
			}
			return jinja.NewInt(r), nil
		}
		return jinja.NewFloat(toFloat(a) + toFloat(b)), nil
	case a.IsString() && b.IsString():
		if err := g.checkSize(len(a.AsString())+len(b.AsString()), "string"); err != nil {
			return g.fail(err)
		}
		return jinja.NewString(a.AsString() + b.AsString()), nil
	case a.IsList() && b.IsList():
		x, y := a.AsList().Items, b.AsList().Items
		if len(x)+len(y) > maxListLen {
			return g.fail(limitf("list of %d items is longer than %d", len(x)+len(y), maxListLen))
		}
		items := make([]jinja.Value, 0, len(x)+len(y))
		return jinja.NewList(append(append(items, x...), y...)), nil
	}
	return g.fail(typeError("+", a, b))
}

// sub is Python's "-" on numbers.
func (g *guard) sub(args []jinja.Value, _ map[string]jinja.Value) (jinja.Value, error) {
	a, b, err := g.numbers("-", args)
	if err != nil {
		return g.fail(err)
	}
	if x, y, ok := ints(a, b); ok {
		r := x - y
		if (r < x) != (y > 0) {
			return g.fail(limitf("integer difference overflows 64 bits"))
		}
		return jinja.NewInt(r), nil
	}
	return jinja.NewFloat(toFloat(a) - toFloat(b)), nil
}

// operands checks the call of a binary operator's hook (the render may
// go on, two arguments) and returns the operands.
func (g *guard) operands(op string, args []jinja.Value) (a, b jinja.Value, err error) {
	if err := g.check(); err != nil {
		return a, b, err
	}
	if err := arity(op, args, 2); err != nil {
		return a, b, err
	}
	return args[0], args[1], nil
}

// numbers is operands for the operators that take only numbers.
func (g *guard) numbers(op string, args []jinja.Value) (a, b jinja.Value, err error) {
	a, b, err = g.operands(op, args)
	if err == nil && (!isNumber(a) || !isNumber(b)) {
		err = typeError(op, a, b)
	}
	return a, b, err
}

// division is numbers for the operators that divide by b.
func (g *guard) division(op string, args []jinja.Value) (a, b jinja.Value, err error) {
	if a, b, err = g.numbers(op, args); err != nil {
		return a, b, err
	}
	if n, ok := intArg(b); (ok && n == 0) || (b.IsFloat() && b.AsFloat() == 0) {
		return a, b, errors.New("division by zero")
	}
	return a, b, nil
}

// typeError is Python's TypeError for operands op does not take.
func typeError(op string, a, b jinja.Value) error {
	return fmt.Errorf("unsupported operand types for %s: %s and %s", op, pyTypeName(a), pyTypeName(b))
}

// ints returns both operands as integers, if both are.
func ints(a, b jinja.Value) (x, y int64, ok bool) {
	x, xok := intArg(a)
	y, yok := intArg(b)
	return x, y, xok && yok
}

// div is Python's "/": always a float.
func (g *guard) div(args []jinja.Value, _ map[string]jinja.Value) (jinja.Value, error) {
	a, b, err := g.division("/", args)
	if err != nil {
		return g.fail(err)
	}
	return jinja.NewFloat(toFloat(a) / toFloat(b)), nil
}

// floorDiv is Python's "//": it rounds toward minus infinity.
func (g *guard) floorDiv(args []jinja.Value, _ map[string]jinja.Value) (jinja.Value, error) {
	a, b, err := g.division("//", args)
	if err != nil {
		return g.fail(err)
	}
	if x, y, ok := ints(a, b); ok {
		if x == math.MinInt64 && y == -1 {
			return g.fail(limitf("integer quotient overflows 64 bits"))
		}
		q := x / y
		if x%y != 0 && (x < 0) != (y < 0) {
			q--
		}
		return jinja.NewInt(q), nil
	}
	q, _ := floatDivmod(toFloat(a), toFloat(b))
	return jinja.NewFloat(q), nil
}

// mod is Python's "%" on numbers: the result has the divisor's sign.
// (String formatting with "%" is not supported.)
func (g *guard) mod(args []jinja.Value, _ map[string]jinja.Value) (jinja.Value, error) {
	if len(args) == 2 && args[0].IsString() {
		return g.fail(errors.New(`string formatting with "%" is not supported`))
	}
	a, b, err := g.division("%", args)
	if err != nil {
		return g.fail(err)
	}
	if x, y, ok := ints(a, b); ok {
		if y == -1 {
			return jinja.NewInt(0), nil
		}
		r := x % y
		if r != 0 && (r < 0) != (y < 0) {
			r += y
		}
		return jinja.NewInt(r), nil
	}
	_, m := floatDivmod(toFloat(a), toFloat(b))
	return jinja.NewFloat(m), nil
}

// floatDivmod is CPython's float_divmod.
func floatDivmod(vx, wx float64) (float64, float64) {
	mod := math.Mod(vx, wx)
	div := (vx - mod) / wx
	if mod != 0 {
		if (wx < 0) != (mod < 0) {
			mod += wx
			div -= 1
		}
	} else {
		mod = math.Copysign(0, wx)
	}
	var floordiv float64
	if div != 0 {
		floordiv = math.Floor(div)
		if div-floordiv > 0.5 {
			floordiv++
		}
	} else {
		floordiv = math.Copysign(0, vx/wx)
	}
	return floordiv, mod
}

func intPow(x, y int64) (int64, bool) {
	r := int64(1)
	for ; y > 0; y-- {
		if x != 0 && (r*x/x != r) {
			return 0, false
		}
		r *= x
		if r == 0 || r == 1 {
			return r, true
		}
		if r == -1 {
			if y%2 == 1 {
				return -1, true
			}
			return 1, true
		}
	}
	return r, true
}

// concat is Jinja2's "~": the operands' str() joined.
func (g *guard) concat(args []jinja.Value, _ map[string]jinja.Value) (jinja.Value, error) {
	if err := g.check(); err != nil {
		return g.fail(err)
	}
	var b strings.Builder
	for _, a := range args {
		s := pyStr(a)
		if err := g.checkSize(b.Len()+len(s), "string"); err != nil {
			return g.fail(err)
		}
		b.WriteString(s)
	}
	return jinja.NewString(b.String()), nil
}

func (g *guard) tojson(args []jinja.Value, kwargs map[string]jinja.Value) (jinja.Value, error) {
	if err := g.check(); err != nil {
		return g.fail(err)
	}
	if len(args) == 0 {
		return g.fail(errors.New("tojson needs a value"))
	}
	o, err := toJSONArgs(args[1:], kwargs)
	if err != nil {
		return g.fail(err)
	}
	d := pyDumper{o: o, isNS: g.isNamespace, limit: g.strLimit}
	if err := d.dump(args[0], 0); err != nil {
		return g.fail(err)
	}
	return jinja.NewString(d.b.String()), nil
}

func (g *guard) str(args []jinja.Value, _ map[string]jinja.Value) (jinja.Value, error) {
	if err := g.check(); err != nil {
		return g.fail(err)
	}
	if err := arity("string", args, 1); err != nil {
		return g.fail(err)
	}
	return jinja.NewString(pyStr(args[0])), nil
}

// width guards the count argument of filters that repeat a string.
func (g *guard) width(args []jinja.Value, _ map[string]jinja.Value) (jinja.Value, error) {
	if err := g.check(); err != nil {
		return g.fail(err)
	}
	if err := arity("width", args, 1); err != nil {
		return g.fail(err)
	}
	if n, ok := intArg(args[0]); ok && n > maxIndent {
		return g.fail(limitf("width %d is larger than %d", n, maxIndent))
	}
	if args[0].IsFloat() && args[0].AsFloat() > maxIndent {
		return g.fail(limitf("width %g is larger than %d", args[0].AsFloat(), maxIndent))
	}
	return args[0], nil
}
