package chat

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ardanlabs/jinja"
)

// maxDataDepth bounds the nesting of data handed to a template.
const maxDataDepth = 256

// messagesValue builds the template's `messages`: one ordered dict per
// message whose keys appear only when set, so `message.tool_calls is
// defined` and friends behave as with Hugging Face's dicts.
func messagesValue(msgs []Message) (jinja.Value, error) {
	items := make([]jinja.Value, 0, len(msgs))
	for i, m := range msgs {
		d := jinja.NewDict()
		md := d.AsDict()
		md.Set("role", jinja.NewString(m.Role))
		md.Set("content", jinja.NewString(m.Content))
		if m.ReasoningContent != "" {
			md.Set("reasoning_content", jinja.NewString(m.ReasoningContent))
		}
		if m.Thinking != "" {
			md.Set("thinking", jinja.NewString(m.Thinking))
		}
		if m.Name != "" {
			md.Set("name", jinja.NewString(m.Name))
		}
		if m.ToolCallID != "" {
			md.Set("tool_call_id", jinja.NewString(m.ToolCallID))
		}
		if m.ToolCalls != nil {
			calls := make([]jinja.Value, 0, len(m.ToolCalls))
			for j, tc := range m.ToolCalls {
				c, err := toolCallValue(tc)
				if err != nil {
					return jinja.Value{}, fmt.Errorf("chat: message %d: tool call %d: %w", i, j, err)
				}
				calls = append(calls, c)
			}
			md.Set("tool_calls", jinja.NewList(calls))
		}
		items = append(items, d)
	}
	return jinja.NewList(items), nil
}

// toolCallValue lays a tool call out the way Hugging Face documents it:
// {"id"?, "type": "function", "function": {"name", "arguments"}}.
func toolCallValue(tc ToolCall) (jinja.Value, error) {
	args := jinja.NewDict()
	if len(bytes.TrimSpace(tc.Arguments)) > 0 {
		v, err := decodeJSON(tc.Arguments)
		if err != nil {
			return jinja.Value{}, fmt.Errorf("arguments: %w", err)
		}
		args = v
	}
	fn := jinja.NewDict()
	fn.AsDict().Set("name", jinja.NewString(tc.Name))
	fn.AsDict().Set("arguments", args)
	d := jinja.NewDict()
	if tc.ID != "" {
		d.AsDict().Set("id", jinja.NewString(tc.ID))
	}
	d.AsDict().Set("type", jinja.NewString("function"))
	d.AsDict().Set("function", fn)
	return d, nil
}

// decodeJSON decodes JSON keeping the order of object keys, as Python's
// json.loads does. Integers stay integers and other numbers become floats.
func decodeJSON(raw []byte) (jinja.Value, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	v, err := decodeValue(dec, 0)
	if err != nil {
		return jinja.Value{}, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return jinja.Value{}, errors.New("invalid JSON: data after the top-level value")
	}
	return v, nil
}

func decodeValue(dec *json.Decoder, depth int) (jinja.Value, error) {
	if depth > maxDataDepth {
		return jinja.Value{}, fmt.Errorf("JSON nested deeper than %d", maxDataDepth)
	}
	tok, err := dec.Token()
	if err != nil {
		return jinja.Value{}, fmt.Errorf("invalid JSON: %w", err)
	}
	if v, ok := scalarValue(tok); ok {
		return v, nil
	}
	if t, ok := tok.(json.Delim); ok {
		switch t {
		case '{':
			d := jinja.NewDict()
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return jinja.Value{}, fmt.Errorf("invalid JSON: %w", err)
				}
				key, ok := k.(string)
				if !ok {
					return jinja.Value{}, errors.New("invalid JSON: object key is not a string")
				}
				v, err := decodeValue(dec, depth+1)
				if err != nil {
					return jinja.Value{}, err
				}
				d.AsDict().Set(key, v)
			}
			if _, err := dec.Token(); err != nil {
				return jinja.Value{}, fmt.Errorf("invalid JSON: %w", err)
			}
			return d, nil
		case '[':
			items := []jinja.Value{}
			for dec.More() {
				v, err := decodeValue(dec, depth+1)
				if err != nil {
					return jinja.Value{}, err
				}
				items = append(items, v)
			}
			if _, err := dec.Token(); err != nil {
				return jinja.Value{}, fmt.Errorf("invalid JSON: %w", err)
			}
			return jinja.NewList(items), nil
		}
	}
	return jinja.Value{}, fmt.Errorf("invalid JSON token %v", tok)
}

// scalarValue converts a JSON scalar as encoding/json decodes it (a
// number as json.Number, null as nil), if v is one.
func scalarValue(v any) (jinja.Value, bool) {
	switch x := v.(type) {
	case nil:
		return jinja.None(), true
	case json.Number:
		return numberValue(string(x)), true
	case string:
		return jinja.NewString(x), true
	case bool:
		return jinja.NewBool(x), true
	}
	return jinja.Value{}, false
}

// numberValue reads a JSON number as Python's json module would: integers
// without a fraction or exponent stay integers.
func numberValue(s string) jinja.Value {
	if !strings.ContainsAny(s, ".eE") {
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			return jinja.NewInt(i)
		}
	}
	f, _ := strconv.ParseFloat(s, 64)
	return jinja.NewFloat(f)
}

// goValue converts a caller's Go value for the template. json.RawMessage
// keeps key order; Go maps have none, so their keys are sorted.
func goValue(v any, depth int) (jinja.Value, error) {
	if depth > maxDataDepth {
		return jinja.Value{}, fmt.Errorf("value nested deeper than %d", maxDataDepth)
	}
	if sv, ok := scalarValue(v); ok {
		return sv, nil
	}
	switch x := v.(type) {
	case json.RawMessage:
		return decodeJSON(x)
	case []byte:
		return jinja.Value{}, errors.New("[]byte is ambiguous: pass a string, or json.RawMessage for JSON")
	case Message:
		l, err := messagesValue([]Message{x})
		if err != nil {
			return jinja.Value{}, err
		}
		return l.AsList().Items[0], nil
	case []Message:
		return messagesValue(x)
	case ToolCall:
		return toolCallValue(x)
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return jinja.NewInt(rv.Int()), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		u := rv.Uint()
		if u > math.MaxInt64 {
			return jinja.Value{}, fmt.Errorf("integer %d does not fit in 64 bits", u)
		}
		return jinja.NewInt(int64(u)), nil
	case reflect.Float32, reflect.Float64:
		return jinja.NewFloat(rv.Float()), nil
	case reflect.String:
		return jinja.NewString(rv.String()), nil
	case reflect.Bool:
		return jinja.NewBool(rv.Bool()), nil
	case reflect.Slice, reflect.Array:
		if rv.Kind() == reflect.Slice && rv.IsNil() {
			return jinja.None(), nil
		}
		items := make([]jinja.Value, rv.Len())
		for i := range items {
			it, err := goValue(rv.Index(i).Interface(), depth+1)
			if err != nil {
				return jinja.Value{}, fmt.Errorf("[%d]: %w", i, err)
			}
			items[i] = it
		}
		return jinja.NewList(items), nil
	case reflect.Map:
		if rv.Type().Key().Kind() != reflect.String {
			return jinja.Value{}, fmt.Errorf("map keys must be strings, not %s", rv.Type().Key())
		}
		if rv.IsNil() {
			return jinja.None(), nil
		}
		keys := make([]string, 0, rv.Len())
		vals := make(map[string]reflect.Value, rv.Len())
		for it := rv.MapRange(); it.Next(); {
			k := it.Key().String()
			keys = append(keys, k)
			vals[k] = it.Value()
		}
		sort.Strings(keys)
		d := jinja.NewDict()
		for _, k := range keys {
			it, err := goValue(vals[k].Interface(), depth+1)
			if err != nil {
				return jinja.Value{}, fmt.Errorf("[%q]: %w", k, err)
			}
			d.AsDict().Set(k, it)
		}
		return d, nil
	case reflect.Pointer, reflect.Interface:
		if rv.IsNil() {
			return jinja.None(), nil
		}
		return goValue(rv.Elem().Interface(), depth+1)
	}
	return jinja.Value{}, fmt.Errorf("unsupported type %T", v)
}

// ---- Python's str() and repr() ---------------------------------------------

// pyStr is Python's str(), which is what Jinja2 prints for {{ value }}.
func pyStr(v jinja.Value) string {
	switch {
	case v.IsUndefined(), v.IsCallable():
		return ""
	case v.IsString():
		return v.AsString()
	}
	var b strings.Builder
	writeRepr(&b, v, 0)
	return b.String()
}

// writeRepr writes Python's repr() of v. Cycles cannot occur (see
// guard.nscheck); depth only guards against very deep data.
func writeRepr(b *strings.Builder, v jinja.Value, depth int) {
	if depth > maxDataDepth {
		b.WriteString("...")
		return
	}
	switch {
	case v.IsUndefined():
		b.WriteString("Undefined")
	case v.IsNone():
		b.WriteString("None")
	case v.IsBool():
		b.WriteString(pick(v.AsBool(), "True", "False"))
	case v.IsInt():
		b.WriteString(strconv.FormatInt(v.AsInt(), 10))
	case v.IsFloat():
		b.WriteString(pyFloatRepr(v.AsFloat()))
	case v.IsString():
		b.WriteString(pyStrRepr(v.AsString()))
	case v.IsList():
		b.WriteByte('[')
		for i, it := range v.AsList().Items {
			if i > 0 {
				b.WriteString(", ")
			}
			writeRepr(b, it, depth+1)
		}
		b.WriteByte(']')
	case v.IsDict():
		d := v.AsDict()
		b.WriteByte('{')
		for i, k := range d.Keys {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(pyStrRepr(k))
			b.WriteString(": ")
			writeRepr(b, d.Data[k], depth+1)
		}
		b.WriteByte('}')
	case v.IsCallable():
		b.WriteString("<function>")
	}
}

// pyFloatRepr is Python's repr() of a float: the shortest digits that read
// back exactly, in positional notation for exponents from -4 to 15.
func pyFloatRepr(f float64) string {
	switch {
	case math.IsNaN(f):
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	e := strconv.FormatFloat(f, 'e', -1, 64) // d.ddde±XX
	mant, expStr, _ := strings.Cut(e, "e")
	exp, _ := strconv.Atoi(expStr)
	if exp >= -4 && exp < 16 {
		s := strconv.FormatFloat(f, 'f', -1, 64)
		if !strings.ContainsAny(s, ".") {
			s += ".0"
		}
		return s
	}
	sign := "+"
	if exp < 0 {
		sign, exp = "-", -exp
	}
	return fmt.Sprintf("%se%s%02d", mant, sign, exp)
}

// pyStrRepr is Python's repr() of a str.
func pyStrRepr(s string) string {
	quote := byte('\'')
	if strings.IndexByte(s, '\'') >= 0 && strings.IndexByte(s, '"') < 0 {
		quote = '"'
	}
	var b strings.Builder
	b.WriteByte(quote)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			fmt.Fprintf(&b, `\x%02x`, s[i])
			i++
			continue
		}
		i += n
		switch {
		case r == rune(quote) || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r < 0x80 || unicode.IsPrint(r):
			b.WriteRune(r)
		case r < 0x100:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r < 0x10000:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			fmt.Fprintf(&b, `\U%08x`, r)
		}
	}
	b.WriteByte(quote)
	return b.String()
}

// pyTypeName names v's Python type for error messages.
func pyTypeName(v jinja.Value) string {
	for _, t := range pyTypes {
		if t.is(v) {
			return t.name
		}
	}
	return "function"
}

// pyTypes are the Python names of the engine's kinds of value (a
// callable is a "function").
var pyTypes = [...]struct {
	is   func(jinja.Value) bool
	name string
}{
	{jinja.Value.IsUndefined, "Undefined"},
	{jinja.Value.IsNone, "NoneType"},
	{jinja.Value.IsBool, "bool"},
	{jinja.Value.IsInt, "int"},
	{jinja.Value.IsFloat, "float"},
	{jinja.Value.IsString, "str"},
	{jinja.Value.IsList, "list"},
	{jinja.Value.IsDict, "dict"},
}
