package chat

import (
	"context"
	"encoding/json"
	"testing"
)

// pythonCases were rendered by Python's jinja2 3.1.6 in Hugging Face's
// setup (ImmutableSandboxedEnvironment, trim_blocks, lstrip_blocks,
// loopcontrols, HF's tojson/raise_exception, strftime_now at 2026-11-29
// 12:00): printing, arithmetic, tojson options, literals, tests, loops,
// macros and whitespace control.
var pythonCases = []struct {
	src, vars, want string
}{
	{"{{ none }}|{{ true }}|{{ 1.0 }}|{{ 1e20 }}|{{ 0.1 }}|{{ 123456789.0 }}|{{ 1.5e-5 }}|{{ [1, 'a', none, 2.5] }}|{{ {'k': true, 'q': \"it's\"} }}",
		"{}",
		"None|True|1.0|1e+20|0.1|123456789.0|1.5e-05|[1, 'a', None, 2.5]|{'k': True, 'q': \"it's\"}"},
	{"{{ 2 ** 10 }}|{{ 2 ** -1 }}|{{ 2 ** 3 ** 2 }}|{{ 7 * 6 }}|{{ 'ab' * 3 }}|{{ 3 * 'ab' }}|{{ [1] * 3 }}|{{ 'ab' * -1 }}|{{ 1.5 * 2 }}|{{ true * 3 }}",
		"{}",
		"1024|0.5|64|42|ababab|ababab|[1, 1, 1]||3.0|3"},
	{"{{ 1 ~ none ~ 2.0 ~ 'x' ~ true ~ [1] }}",
		"{}",
		"1None2.0xTrue[1]"},
	{"{{ x | tojson }}",
		"{\"x\": {\"b\": 1, \"a\": [1.0, 2.5, 1e+20, -0.0, 9007199254740993, \"éé\\\"\\\\\\n\\t\\u0001<&>\u2028\", {}, [], null, true]}}",
		"{\"b\": 1, \"a\": [1.0, 2.5, 1e+20, -0.0, 9007199254740993, \"éé\\\"\\\\\\n\\t\\u0001<&>\u2028\", {}, [], null, true]}"},
	{"{{ x | tojson(indent=2) }}",
		"{\"x\": {\"b\": 1, \"a\": [1, {\"c\": []}], \"d\": {}}}",
		"{\n  \"b\": 1,\n  \"a\": [\n    1,\n    {\n      \"c\": []\n    }\n  ],\n  \"d\": {}\n}"},
	{"{{ x | tojson(indent=0) }}|{{ x | tojson(indent='\\t') }}",
		"{\"x\": {\"b\": [1, 2]}}",
		"{\n\"b\": [\n1,\n2\n]\n}|{\n\t\"b\": [\n\t\t1,\n\t\t2\n\t]\n}"},
	{"{{ x | tojson(sort_keys=true) }}|{{ x | tojson(separators=(',', ':')) }}|{{ x | tojson(ensure_ascii=true) }}",
		"{\"x\": {\"z\": \"서울 😊\", \"a\": 1}}",
		"{\"a\": 1, \"z\": \"서울 😊\"}|{\"z\":\"서울 😊\",\"a\":1}|{\"z\": \"\\uc11c\\uc6b8 \\ud83d\\ude0a\", \"a\": 1}"},
	{"{{ x | tojson(true, 2) }}",
		"{\"x\": {\"z\": \"é\", \"a\": [1]}}",
		"{\n  \"z\": \"\\u00e9\",\n  \"a\": [\n    1\n  ]\n}"},
	{"{{ 'a' 'b' \"c\" }}|{{ '\\u00e9\\x41\\101\\n\\q' }}|{{ 0x1F + 0o17 + 0b11 + 1_000 }}|{{ 1e3 }}|{{ 1_0.5_0 }}",
		"{}",
		"abc|éAA\n\\q|1049|1000.0|10.5"},
	{"{{ 1 < 2 < 3 }}|{{ 3 > 2 > 2 }}|{{ 1 in [1] }}|{{ 2 not in [1] }}|{{ not 1 in [1] }}|{{ -x | abs }}",
		"{\"x\": 3}",
		"True|False|True|True|False|3"},
	{"{{ 3 is odd }}|{{ 'A' is upper }}|{{ x is sameas false }}|{{ 2 is ge 1 }}|{{ y is not defined }}|{{ x is none }}|{{ none is none }}",
		"{\"x\": false}",
		"True|True|True|True|True|False|True"},
	{"[{{ 'a' if false }}]|{{ 'x' if true else 'y' if false else 'z' }}|{{ 'x' if false else 'y' if false else 'z' }}",
		"{}",
		"[]|x|z"},
	{"{{ 'hello'[1:3] }}|{{ [1,2,3,4][::-1] }}|{{ 'abc'[-1] }}|{{ [1,2,3,4][1:] }}|{{ x.0 }}|{{ x[1] }}",
		"{\"x\": [\"p\", \"q\"]}",
		"el|[4, 3, 2, 1]|c|[2, 3, 4]|p|q"},
	{"{% if true %}{{ 'b' }}\nC{% endif %}|  {%- if true -%}  x  {%- endif %}  |{{ 'a' -}}   {{ 'b' }}\n  {% if true %}\n    y\n  {% endif %}\nend",
		"{}",
		"b\nC|x  |ab\n    y\nend"},
	{"{% set ns = namespace(n=0) %}{% for i in range(3) %}{% set ns.n = ns.n + i %}{% endfor %}{{ ns.n }}",
		"{}",
		"3"},
	{"{% for i in range(10) %}{% if i == 2 %}{% continue %}{% endif %}{% if i == 4 %}{% break %}{% endif %}{{ i }}{% endfor %}",
		"{}",
		"013"},
	{"{% macro m(a, b='x') %}{{ a }}{{ b }}{% endmacro %}{{ m(1) }}{{ m(2, 'y') }}{{ m(3, b='z') }}|{% macro w() %}<{{ caller() }}>{% endmacro %}{% call w() %}in{% endcall %}",
		"{}",
		"1x2y3z|<in>"},
	{"{% filter upper %}abc{{ 'd' }}{% endfilter %}|{% set s %}a{{ 1 }}b{% endset %}{{ s }}",
		"{}",
		"ABCD|a1b"},
	{"{{ x | string }}|{{ 1.0 | string }}|{{ none | string }}",
		"{\"x\": [1, \"a\"]}",
		"[1, 'a']|1.0|None"},
	{"{{ strftime_now('%d %b %Y') }}|{{ strftime_now('%A %B %-d %H:%M %p %j %y %e %I %a %b %m %S %%') }}",
		"{}",
		"29 Nov 2026|Sunday November 29 12:00 PM 333 26 29 12 Sun Nov 11 00 %"},
	{"{{ '안녕' ~ x }}|{{ x | tojson }}|{{ x | length }}|{{ x[0] }}",
		"{\"x\": \"하세요\"}",
		"안녕하세요|\"하세요\"|3|하"},
	{"{{ {'a': {'b': 1}} }}|{{ {'a': {'b': {'c': 1}}}['a'] }}",
		"{}",
		"{'a': {'b': 1}}|{'b': {'c': 1}}"},
	{"{% for a, b in [[1, 2], [3, 4]] %}{{ a }}{{ b }}{% endfor %}|{% for k, v in x.items() %}{{ k }}={{ v }} {% endfor %}",
		"{\"x\": {\"z\": 1, \"a\": 2}}",
		"1234|z=1 a=2 "},
	{"{% for x in [1,2,3] if x > 1 %}{{ x }}{{ loop.index }}{{ loop.length }}{% endfor %}|{% for x in [] %}a{% else %}empty{% endfor %}",
		"{}",
		"212322|empty"},
	{"{{ '　a　' | trim }}|{{ ' a b ' | trim }}|{{ 'a,b' .split(',') }}|{{ '  x\n' | trim }}",
		"{}",
		"a|a b|['a', 'b']|x"},
	{"{{ 10 / 4 }}|{{ 10 // 4 }}|{{ 10 % 4 }}|{{ -7 // 2 }}|{{ -7 % 3 }}|{{ 7.5 // 2 }}|{{ 1 / 3 }}",
		"{}",
		"2.5|2|2|-4|2|3.0|0.3333333333333333"},
	{"{{ x.a }}|{{ x['b'] }}|{{ x.get('c', 'd') }}|{{ x.missing }}|{{ x | length }}|{{ x.keys() | list }}",
		"{\"x\": {\"a\": 1, \"b\": 2}}",
		"1|2|d||2|['a', 'b']"},
	{"{{ [3, 1, 2] | sort | join(',') }}|{{ ['a','b'] | join }}|{{ x | map(attribute='n') | join(',') }}|{{ x | selectattr('n', 'equalto', 2) | list | length }}",
		"{\"x\": [{\"n\": 1}, {\"n\": 2}]}",
		"1,2,3|ab|1,2|1"},
	{"{{ 'Hello' | upper }}{{ 'Hello' | lower }}{{ 'hello world' | title }}{{ 'x' | replace('x', 'yy') }}|{{ 'abc'.startswith('a') }}|{{ '  a '.strip() }}|{{ 'a\nb' | indent(2) }}|{{ 'a\nb' | indent(2, true) }}",
		"{}",
		"HELLOhelloHello Worldyy|True|a|a\n  b|  a\n  b"},
	{"{{ 1 if x else 2 }}{% if x and y or z %}A{% elif not x %}B{% else %}C{% endif %}",
		"{\"x\": 0, \"y\": 1, \"z\": 0}",
		"2B"},
	{"{% raw %}{{ not rendered }}{% endraw %}|{#- comment -#}  |{%+ if true %}x{% endif %}",
		"{}",
		"{{ not rendered }}||x"},
	{"  {% if true %}\r\n  a\r\n  {% endif %}\r\nb\n",
		"{}",
		"  a\nb"},
	{"x {% if true +%}\ny{%+ endif %} {# c #}\nz{#- c -#}  w",
		"{}",
		"x \ny zw"},
	{"a\n  {%- raw -%}\n  {{ r }}  \n  {%- endraw %}\nb",
		"{}",
		"a{{ r }}b"},
	{"{% for m in ['a', 'b'] %}\n  {{ m }}\n{% endfor %}\n",
		"{}",
		"  a\n  b\n"},
	{"{%- set a = 1 -%}\n\n  {{- a -}}\n\n  {{ a }}  \n{{+ a }}",
		"{}",
		"11  \n1"},
	{"<{{ '}}' }}{{ \"%}\" }}{{ {'a': [1, {'b': 2}]} }}>",
		"{}",
		"<}}%}{'a': [1, {'b': 2}]}>"},
	{"{% macro f(items, sep=', ', wrap=['<', '>']) %}{{ wrap[0] }}{{ items | join(sep) }}{{ wrap[1] }}{% endmacro %}{{ f(['a', 'b']) }}|{{ f(['c'], '; ') }}|{{ f(['d', 'e'], sep='+', wrap=('(', ')')) }}",
		"{}",
		"<a, b>|<c>|(d+e)"},
	{"{% macro row(x) %}[{{ caller(x, x * 2) }}]{% endmacro %}{% call(a, b) row(3) %}{{ a }}-{{ b }}{% endcall %}",
		"{}",
		"[3-6]"},
	{"{% filter indent(2) %}a\nb{% endfilter %}|{% filter upper %}x{% endfilter %}",
		"{}",
		"a\n  b|X"},
	{"{% for (a, b) in [[1, 2]] %}{{ a + b }}{% endfor %}|{% for (a) in [1] %}{{ a }}{% endfor %}",
		"{}",
		"3|1"},
	{"{% set x = 1, 2 %}{{ x[0] }}{{ x | length }}|{{ (1, 2)[1] }}",
		"{}",
		"12|2"},
	{"{% if x is defined %}{% set x = x + 1 %}{% endif %}{{ x }}",
		"{\"x\": 1}",
		"2"},
	{"{%- for m in ms -%}{%- if loop.first -%}F{%- endif -%}{{ loop.index0 }}{{ loop.revindex }}{{ '!' if loop.last }}{% endfor %}",
		"{\"ms\": [1, 2, 3]}",
		"F031221!"},
	{"{{ x | default('d') }}|{{ none | default('d') }}|{{ '' | default('d', true) }}|{{ y | default('d') }}",
		"{\"x\": [{\"a\": 1}, {\"b\": 2}]}",
		"[{'a': 1}, {'b': 2}]|None|d|d"},
	{"{{ 'hello world' | wordcount }}|{{ 'hELLO' | capitalize }}|{{ 'abc' | reverse }}|{{ [1,2] | reverse | list }}|{{ 'ab' | list }}",
		"{\"x\": [{\"a\": 1}, {\"b\": 2}]}",
		"2|Hello|cba|[2, 1]|['a', 'b']"},
	{"{{ [3,1,2] | min }}{{ [3,1,2] | max }}{{ [1,2,3] | sum }}|{{ 2.567 | round(2) }}|{{ 2.5 | round }}|{{ 3.5 | round }}|{{ '42' | int }}|{{ '4.5' | float }}|{{ -3 | abs }}",
		"{\"x\": [{\"a\": 1}, {\"b\": 2}]}",
		"136|2.57|2.0|4.0|42|4.5|3"},
	{"{{ ['a','b'] | map('upper') | list }}|{{ [1,2,3,4] | select('odd') | list }}|{{ [1,2,3] | reject('odd') | list }}",
		"{\"x\": [{\"a\": 1}, {\"b\": 2}]}",
		"['A', 'B']|[1, 3]|[2]"},
	{"{{ x | selectattr('a', 'defined') | list | length }}|{{ x | rejectattr('a', 'undefined') | list | length }}|{{ x | selectattr('a') | list | length }}",
		"{\"x\": [{\"a\": 1}, {\"b\": 2}]}",
		"1|1|1"},
	{"{{ 'xxhixx'.lstrip('x') }}|{{ 'Hello'.title() }}|{{ 'abcabc'.count('b') }}|{{ 'abc'.find('c') }}|{{ 'abc'.upper() }}|{{ 'a,b'.split(',', 1) }}",
		"{\"x\": [{\"a\": 1}, {\"b\": 2}]}",
		"hixx|Hello|2|2|ABC|['a', 'b']"},
	{"{{ x[0].a if x else 'no' }}|{{ x | length }}|{{ x | tojson }}|{{ x[1] is mapping }}|{{ x is sequence }}|{{ 'a' is string }}|{{ 1 is number }}|{{ x is iterable }}",
		"{\"x\": [{\"a\": 1}, {\"b\": 2}]}",
		"1|2|[{\"a\": 1}, {\"b\": 2}]|True|True|True|True|True"},
	{"{{ true and 'x' }}|{{ false or 'y' }}|{{ 0 or '' }}|{{ not '' }}|{{ 'a' if [] else 'b' }}|{{ none is none }}",
		"{\"x\": [{\"a\": 1}, {\"b\": 2}]}",
		"x|y||True|b|True"},
	{"{{ 'hello' | indent(4, true) }}|{{ 'a\nb' | indent(first=true) }}|{{ 'a\n\nb' | indent(2) }}",
		"{\"x\": [{\"a\": 1}, {\"b\": 2}]}",
		"    hello|    a\n    b|a\n\n  b"},
	{"{{ range(3) | list }}|{{ range(1, 10, 3) | list }}|{{ range(5, 0, -2) | list }}",
		"{\"x\": [{\"a\": 1}, {\"b\": 2}]}",
		"[0, 1, 2]|[1, 4, 7]|[5, 3, 1]"},
	{"{{ 2.675 | round(2) }}|{{ 0.125 | round(2) }}|{{ 1234.5 | round(-2) }}|{{ 2 | round }}|{{ -2.5 | round }}|{{ 2.1 | round(0, 'ceil') }}|{{ 2.9 | round(method='floor') }}|{{ 15 | round(-1) }}",
		"{}",
		"2.67|0.12|1200.0|2|-2.0|3.0|2.0|20"},
	{"{{ ', '.join(['a', 'b']) }}|{{ '-'.join('xyz') }}|{{ x | map(attribute='a') | list }}|{{ x | map(attribute='a', default='z') | list }}|{{ x | selectattr('a') | list | length }}|{{ ['a', ' b '] | map('trim') | map('upper') | join(',') }}|{{ x | map('tojson') | join(';') }}",
		"{\"x\": [{\"a\": 1}, {\"b\": 2}]}",
		"a, b|x-y-z|[1, Undefined]|[1, 'z']|1|A,B|{\"a\": 1};{\"b\": 2}"},
	{"{{ x | selectattr('function.name', 'equalto', 'f') | list | length }}|{{ x | rejectattr('function.name', 'in', ['f']) | map(attribute='function.name') | list }}|{{ [1, 2, 3, 4] | select('divisibleby', 2) | list }}|{{ [1, none, 3] | reject('none') | list }}|{{ ['a', 1] | select('string') | list }}|{{ [3, 1, 4] | select('gt', 2) | list }}",
		"{\"x\": [{\"function\": {\"name\": \"f\"}}, {\"function\": {\"name\": \"g\"}}]}",
		"1|['g']|[2, 4]|[1, 3]|['a']|[3, 4]"},
	{"{{ ['hello wORLD', 'aBC'] | map('title') | list }}|{{ ['hello wORLD'] | map('capitalize') | list }}|{{ ['42', 3.9, true] | map('int') | list }}|{{ ['1.5', 2] | map('float') | list }}|{{ [[1, 2], 'abc', {}] | map('length') | list }}|{{ ['ab', [3, 4]] | map('first') | list }}|{{ ['ab', [3, 4]] | map('last') | list }}|{{ [1, none] | map('string') | list }}|{{ [' a '] | map('lower') | list }}",
		"{}",
		"['Hello World', 'Abc']|['Hello world']|[42, 3, 1]|[1.5, 2.0]|[2, 3, 0]|['a', 3]|['b', 4]|['1', 'None']|[' a ']"},
	{"{{ [[1], [2], {'a': 1}, {'a': 2}] | select('eq', [1]) | list }}|{{ [{'a': 1}, {'a': 2}] | select('equalto', {'a': 2}) | list }}|{{ 'abcA' | select('upper') | list }}|{{ {'x': 1, 'y': 2} | map('upper') | list }}|{{ ['a', 'b'] | select('in', 'xay') | list }}|{{ [1, 2] | select('in', [2, 3]) | list }}|{{ [1, 2.0, 'x'] | select('number') | list }}|{{ [1, 2] | reject('ne', 2) | list }}|{{ x | selectattr('items.0', 'equalto', 5) | list | length }}",
		"{\"x\": [{\"items\": [5]}, {\"items\": []}]}",
		"[[1]]|[{'a': 2}]|['A']|['X', 'Y']|['a']|[2]|[1, 2.0]|[2]|1"},
	{"{{ 7 / 2 }}|{{ -7 / 2 }}|{{ 7 // -2 }}|{{ -7.5 // 2 }}|{{ 7.5 % -2 }}|{{ -7 % -3 }}|{{ 0.0 // 1 }}|{{ (-2) ** 3 }}|{{ 2 ** 0.5 }}|{{ 4 ** -1 }}|{{ 10 - 2.5 }}|{{ 3 - 5 }}|{{ [1] + [2] }}|{{ 'a' + 'b' }}|{{ 1 + 2.5 }}|{{ true + 1 }}",
		"{}",
		"3.5|-3.5|-4|-4.0|-0.5|-1|0.0|-8|1.4142135623730951|0.25|7.5|-2|[1, 2]|ab|3.5|2"},
	{"{{ x | selectattr('a', 'none') | list | length }}|{{ x | selectattr('a', 'false') | list | length }}|{{ x | selectattr('a', 'integer') | list | length }}|{{ y | selectattr('a', 'lt', 2) | list | length }}|{{ y | selectattr('a', 'ge', 1) | list | length }}|{{ y | rejectattr('a', 'even') | list | length }}|{{ y | selectattr('a', 'divisibleby', 2) | list | length }}",
		"{\"x\": [{\"a\": 1}, {\"a\": 2}, {\"a\": null}, {\"a\": false}], \"y\": [{\"a\": 1}, {\"a\": 2}, {\"a\": 3}]}",
		"1|1|2|1|3|2|1"},
}

func TestPythonSemantics(t *testing.T) {
	for i, c := range pythonCases {
		tmpl, err := Parse(c.src)
		if err != nil {
			t.Errorf("case %d %q: Parse: %v", i, c.src, err)
			continue
		}
		var vars map[string]json.RawMessage
		if err := json.Unmarshal([]byte(c.vars), &vars); err != nil {
			t.Fatal(err)
		}
		extra := map[string]any{}
		for k, v := range vars {
			extra[k] = v
		}
		got, err := tmpl.Render(context.Background(), nil, Options{Extra: extra, Now: goldenNow})
		if err != nil {
			t.Errorf("case %d %q: Render: %v", i, c.src, err)
			continue
		}
		if got != c.want {
			t.Errorf("case %d %q:\n got: %q\nwant: %q", i, c.src, got, c.want)
		}
	}
}

// TestPythonErrors: expressions Python's jinja2 refuses must fail here too
// rather than render something.
func TestPythonErrors(t *testing.T) {
	for _, src := range []string{
		"{{ 1 / 0 }}", "{{ 1 // 0 }}", "{{ 1 % 0 }}", "{{ 1.5 / 0.0 }}",
		"{{ 'a' + 1 }}", "{{ 1 + 'a' }}", "{{ [1] + 'a' }}", "{{ 'a' - 'b' }}", "{{ 'a' * 'b' }}",
		"{{ {'a': 1} + {'b': 2} }}", "{{ none + 1 }}", "{{ '%s' % 'x' }}", "{{ 0 ** -1 }}", "{{ (-8) ** 0.5 }}",
		"{{ ', '.join([1, 2]) }}", "{{ [1].join(',') }}", "{{ range(1.5) }}", "{{ range(1, 2, 0) }}",
		"{{ [1, 2] | map('nosuchfilter') | list }}", "{{ [1] | select('nosuchtest') | list }}",
		"{{ x | tojson }}", "{{ namespace(a=1) | tojson }}", "{{ [1] | tojson(indent=[]) }}", "{{ 1 | tojson(bogus=1) }}",
		"{{ strftime_now(1) }}", "{{ 9223372036854775807 + 1 }}", "{{ -9223372036854775807 - 2 }}",
	} {
		tmpl, err := Parse(src)
		if err != nil {
			t.Errorf("Parse(%q): %v", src, err)
			continue
		}
		if got, err := tmpl.Render(context.Background(), nil, Options{}); err == nil {
			t.Errorf("%q rendered %q, want an error", src, got)
		}
	}
}
