package chat

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ardanlabs/jinja"
)

// dumpOptions are the arguments of Hugging Face's tojson filter, which is
// json.dumps(x, ensure_ascii=..., indent=..., separators=..., sort_keys=...).
type dumpOptions struct {
	ensureASCII bool
	indent      *string // nil: no newlines
	itemSep     string
	keySep      string
	sortKeys    bool
}

// toJSONArgs maps tojson's arguments, positional in Hugging Face's order
// tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False),
// onto dumpOptions.
func toJSONArgs(args []jinja.Value, kwargs map[string]jinja.Value) (dumpOptions, error) {
	names := []string{"ensure_ascii", "indent", "separators", "sort_keys"}
	if len(args) > len(names) {
		return dumpOptions{}, fmt.Errorf("tojson takes at most %d arguments, got %d", len(names), len(args))
	}
	set := map[string]jinja.Value{}
	for i, a := range args {
		set[names[i]] = a
	}
	for k, v := range kwargs {
		known := false
		for _, n := range names {
			known = known || n == k
		}
		if !known {
			return dumpOptions{}, fmt.Errorf("tojson got an unexpected keyword argument %q", k)
		}
		if _, dup := set[k]; dup {
			return dumpOptions{}, fmt.Errorf("tojson got multiple values for argument %q", k)
		}
		set[k] = v
	}
	o := dumpOptions{itemSep: ", ", keySep: ": "}
	if v, ok := set["ensure_ascii"]; ok {
		o.ensureASCII = v.IsTruthy()
	}
	if v, ok := set["indent"]; ok && !v.IsNone() && !v.IsUndefined() {
		var ind string
		switch {
		case v.IsString():
			ind = v.AsString()
		case v.IsInt() || v.IsBool():
			n := int64(0)
			if v.IsBool() {
				if v.AsBool() {
					n = 1
				}
			} else {
				n = v.AsInt()
			}
			if n > maxIndent {
				return dumpOptions{}, fmt.Errorf("%w: tojson indent %d is larger than %d", ErrLimit, n, maxIndent)
			}
			if n > 0 {
				ind = strings.Repeat(" ", int(n))
			}
		default:
			return dumpOptions{}, fmt.Errorf("tojson indent must be an integer or a string, not %s", pyTypeName(v))
		}
		if len(ind) > maxIndent {
			return dumpOptions{}, fmt.Errorf("%w: tojson indent longer than %d", ErrLimit, maxIndent)
		}
		o.indent = &ind
		o.itemSep = ","
	}
	if v, ok := set["separators"]; ok && !v.IsNone() && !v.IsUndefined() {
		if !v.IsList() || v.AsList().Len() != 2 || !v.AsList().Items[0].IsString() || !v.AsList().Items[1].IsString() {
			return dumpOptions{}, errors.New("tojson separators must be a pair of strings")
		}
		o.itemSep = v.AsList().Items[0].AsString()
		o.keySep = v.AsList().Items[1].AsString()
	}
	if v, ok := set["sort_keys"]; ok {
		o.sortKeys = v.IsTruthy()
	}
	return o, nil
}

// pyDumps is Python's json.dumps (allow_nan=True, check_circular is moot:
// templates cannot build cycles).
type pyDumper struct {
	o     dumpOptions
	b     strings.Builder
	isNS  func(*jinja.Dict) bool
	limit int
}

func (d *pyDumper) dump(v jinja.Value, level int) error {
	if level > maxDataDepth {
		return fmt.Errorf("tojson: value nested deeper than %d", maxDataDepth)
	}
	if d.limit > 0 && d.b.Len() > d.limit {
		return fmt.Errorf("%w: tojson output larger than %d bytes", ErrLimit, d.limit)
	}
	switch {
	case v.IsNone():
		d.b.WriteString("null")
	case v.IsBool():
		d.b.WriteString(pick(v.AsBool(), "true", "false"))
	case v.IsInt():
		d.b.WriteString(strconv.FormatInt(v.AsInt(), 10))
	case v.IsFloat():
		f := v.AsFloat()
		switch {
		case math.IsNaN(f):
			d.b.WriteString("NaN")
		case math.IsInf(f, 1):
			d.b.WriteString("Infinity")
		case math.IsInf(f, -1):
			d.b.WriteString("-Infinity")
		default:
			d.b.WriteString(pyFloatRepr(f))
		}
	case v.IsString():
		writeJSONString(&d.b, v.AsString(), d.o.ensureASCII)
	case v.IsList():
		items := v.AsList().Items
		if len(items) == 0 {
			d.b.WriteString("[]")
			return nil
		}
		d.b.WriteByte('[')
		for i, it := range items {
			if i > 0 {
				d.b.WriteString(d.o.itemSep)
			}
			d.newline(level + 1)
			if err := d.dump(it, level+1); err != nil {
				return err
			}
		}
		d.newline(level)
		d.b.WriteByte(']')
	case v.IsDict():
		dict := v.AsDict()
		if d.isNS != nil && d.isNS(dict) {
			return errors.New("tojson: object of type Namespace is not JSON serializable")
		}
		if dict.Len() == 0 {
			d.b.WriteString("{}")
			return nil
		}
		keys := dict.Keys
		if d.o.sortKeys {
			keys = append([]string(nil), keys...)
			sort.Strings(keys)
		}
		d.b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				d.b.WriteString(d.o.itemSep)
			}
			d.newline(level + 1)
			writeJSONString(&d.b, k, d.o.ensureASCII)
			d.b.WriteString(d.o.keySep)
			if err := d.dump(dict.Data[k], level+1); err != nil {
				return err
			}
		}
		d.newline(level)
		d.b.WriteByte('}')
	default:
		return fmt.Errorf("tojson: object of type %s is not JSON serializable", pyTypeName(v))
	}
	return nil
}

func (d *pyDumper) newline(level int) {
	if d.o.indent == nil {
		return
	}
	d.b.WriteByte('\n')
	for range level {
		d.b.WriteString(*d.o.indent)
	}
}

// writeJSONString quotes s as Python's json module does: only '"', '\\'
// and control characters are escaped, unless ensureASCII asks for every
// non-ASCII character as \uXXXX (surrogate pairs above U+FFFF).
func writeJSONString(b *strings.Builder, s string, ensureASCII bool) {
	b.WriteByte('"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			i++
			switch c {
			case '"':
				b.WriteString(`\"`)
			case '\\':
				b.WriteString(`\\`)
			case '\n':
				b.WriteString(`\n`)
			case '\r':
				b.WriteString(`\r`)
			case '\t':
				b.WriteString(`\t`)
			case '\b':
				b.WriteString(`\b`)
			case '\f':
				b.WriteString(`\f`)
			default:
				if c < 0x20 || (ensureASCII && c == 0x7f) {
					fmt.Fprintf(b, `\u%04x`, c)
				} else {
					b.WriteByte(c)
				}
			}
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if !ensureASCII {
			b.WriteString(s[i : i+n])
		} else if r >= 0x10000 {
			r -= 0x10000
			fmt.Fprintf(b, `\u%04x\u%04x`, 0xd800+(r>>10), 0xdc00+(r&0x3ff))
		} else {
			fmt.Fprintf(b, `\u%04x`, r)
		}
		i += n
	}
	b.WriteByte('"')
}
