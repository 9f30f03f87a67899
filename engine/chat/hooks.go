package chat

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
