package chat

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/churon/churon/internal/cputime"
)

// quick is how much CPU time a malicious template may take to be
// stopped. Generous: an unguarded render would take hours or crash the
// process; the race detector slows big copies a lot. CPU time, not the
// wall clock: on a loaded machine the wall clock of a render that
// allocates 64 MiB reads several seconds (the CI saw 3.2-6.6 s for
// "replace doubling", which takes a quarter of a second of CPU).
var quick = 3 * time.Second

func renderSrc(t *testing.T, src string, opt Options) (string, error) {
	t.Helper()
	tmpl, err := Parse(src)
	if err != nil {
		t.Fatalf("Parse(%q): %v", src, err)
	}
	if opt.Timeout == 0 {
		// Far past quick: the guard's own limit, not the clock, must
		// stop the render, and the callers check its error says so.
		opt.Timeout = 2 * time.Minute
	}
	start := cputime.Process()
	out, err := tmpl.Render(context.Background(), []Message{{Role: "user", Content: "hi"}}, opt)
	if d := cputime.Process() - start; d > quick {
		t.Errorf("render took %v of CPU time, want under %v", d, quick)
	}
	return out, err
}

func TestSandboxStopsMaliciousTemplates(t *testing.T) {
	cases := []struct {
		name, src string
		want      error
		inMsg     string
	}{
		{"huge range", "{% for i in range(10**12) %}x{% endfor %}", ErrLimit, "range"},
		{"huge range int literal", "{% for i in range(1000000000000) %}{% endfor %}", ErrLimit, "range"},
		{"recursive macro", "{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}", ErrLimit, "macro"},
		{"mutually recursive macros",
			"{% macro a(n) %}{{ b(n) }}{% endmacro %}{% macro b(n) %}{{ a(n) }}{% endmacro %}{{ a(1) }}", ErrLimit, "macro"},
		{"recursion through caller",
			"{% macro f() %}{% call f() %}x{% endcall %}{{ caller() }}{% endmacro %}{% call f() %}y{% endcall %}", ErrLimit, "macro"},
		{"string times huge power", "{{ 'a' * 10**12 }}", ErrLimit, "repetition"},
		{"string times huge int", "{{ 'a' * 1000000000000 }}", ErrLimit, "repetition"},
		{"string times computed int", "{% set n = 1000000 * 1000000 %}{{ 'ab' * n }}", ErrLimit, "repetition"},
		{"int times string", "{{ 1000000000000 * 'a' }}", ErrLimit, "repetition"},
		{"list repetition", "{{ [1, 2] * 10**9 }}", ErrLimit, "repetition"},
		{"concat doubling", "{% set ns = namespace(s='a') %}{% for i in range(64) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s }}", ErrLimit, ""},
		{"plus doubling", "{% set ns = namespace(s='ab') %}{% for i in range(64) %}{% set ns.s = ns.s + ns.s %}{% endfor %}{{ ns.s | length }}", ErrLimit, "string"},
		// The engine's own string methods are not hooked: the allocation
		// budget stops them.
		{"replace doubling", "{% set ns = namespace(s='a') %}{% for i in range(64) %}{% set ns.s = ns.s.replace('a', 'aa') %}{% endfor %}{{ ns.s | length }}", ErrLimit, "allocated"},
		{"string plus number", "{{ 'a' + 1 }}", nil, "unsupported operand"},
		{"integer overflow", "{{ 2 ** 200 }}", ErrLimit, "overflow"},
		{"indent width", "{{ 'a\nb' | indent(10**9) }}", ErrLimit, "width"},
		{"indent width keyword", "{{ 'a\nb' | indent(width=10**9) }}", ErrLimit, "width"},
		{"tojson indent", "{{ [1] | tojson(indent=10**9) }}", ErrLimit, "indent"},
		{"namespace containing itself", "{% set ns = namespace(a=1) %}{% set ns.a = ns %}{{ ns }}", ErrUnsafe, "itself"},
		{"namespace cycle through a list", "{% set ns = namespace(a=1) %}{% set ns.a = [1, [ns]] %}{{ ns }}", ErrUnsafe, "itself"},
		{"two namespaces in a cycle",
			"{% set a = namespace(x=1) %}{% set b = namespace(y=a) %}{% set a.x = b %}{{ a }}", ErrUnsafe, "itself"},
		{"dict update", "{% set d = {} %}{% set _ = d.update({'a': d}) %}{{ d }}", ErrUnsafe, "update"},
		{"list append", "{% set l = [] %}{{ l.append(l) }}{{ l }}", ErrUnsafe, "append"},
		{"pop", "{{ messages.pop() }}", ErrUnsafe, "pop"},
		{"attribute on a message", "{% set m = messages[0] %}{% set m.role = 'system' %}", ErrUnsafe, "non-namespace"},
	}
	old := allocBudget
	allocBudget = 32 << 20
	defer func() { allocBudget = old }()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, err := renderSrc(t, c.src, Options{MaxOutput: 1 << 10})
			if err == nil {
				t.Fatalf("rendered %d bytes, want an error", len(out))
			}
			if c.want != nil && !errors.Is(err, c.want) {
				t.Errorf("error %v does not match %v", err, c.want)
			}
			if !strings.Contains(err.Error(), c.inMsg) {
				t.Errorf("error %q does not mention %q", err, c.inMsg)
			}
		})
	}
}

func TestSandboxLoopTimesOut(t *testing.T) {
	tmpl, err := Parse("{% for i in range(100000) %}{% for j in range(100000) %}{% if i == j %}{% endif %}{% endfor %}{% endfor %}")
	if err != nil {
		t.Fatal(err)
	}
	before := runtime.NumGoroutine()
	start := time.Now()
	_, err = tmpl.Render(context.Background(), nil, Options{Timeout: 100 * time.Millisecond})
	if d := time.Since(start); d > time.Second {
		t.Errorf("render returned after %v, want about 100ms", d)
	}
	// Either the clock or the allocation budget (each inner range is a new
	// list) may stop it first; both are fine, but not silence.
	if !errors.Is(err, ErrTimeout) && !errors.Is(err, ErrLimit) {
		t.Fatalf("error %v, want ErrTimeout or ErrLimit", err)
	}
	if errors.Is(err, ErrTimeout) && !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("timeout error %v does not match context.DeadlineExceeded", err)
	}
	// The render goroutine must notice and stop soon after.
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Errorf("%d goroutines still running after the timeout, had %d before", n, before)
	}
}

func TestSandboxContextCancel(t *testing.T) {
	tmpl, err := Parse("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	start := time.Now()
	_, err = tmpl.Render(ctx, nil, Options{Timeout: time.Minute})
	if d := time.Since(start); d > time.Second {
		t.Errorf("render returned %v after cancel", d)
	}
	if !errors.Is(err, context.Canceled) && !errors.Is(err, ErrLimit) {
		t.Fatalf("error %v, want context.Canceled", err)
	}

	done, cancel2 := context.WithCancel(context.Background())
	cancel2()
	if _, err := Fallback().Render(done, nil, Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("render with a cancelled context: %v, want context.Canceled", err)
	}
}

func TestSandboxOutputLimit(t *testing.T) {
	// Stopped while rendering: 100k iterations of 100 bytes.
	_, err := renderSrc(t, "{% for i in range(100000) %}{{ 'x' * 100 }}{% endfor %}", Options{MaxOutput: 1 << 16})
	if !errors.Is(err, ErrOutputTooLarge) || !errors.Is(err, ErrLimit) {
		t.Errorf("error %v, want ErrOutputTooLarge (and ErrLimit)", err)
	}
	// Checked exactly at the end: 2000 bytes against a 1999-byte limit.
	_, err = renderSrc(t, "{% for i in range(20) %}{{ 'y' * 100 }}{% endfor %}", Options{MaxOutput: 1999})
	if !errors.Is(err, ErrOutputTooLarge) {
		t.Errorf("error %v, want ErrOutputTooLarge", err)
	}
	out, err := renderSrc(t, "{% for i in range(20) %}{{ 'y' * 100 }}{% endfor %}", Options{MaxOutput: 2000})
	if err != nil || len(out) != 2000 {
		t.Errorf("at the limit: %d bytes, %v", len(out), err)
	}
}

func TestSandboxRefusesLoading(t *testing.T) {
	for _, src := range []string{
		"{% include 'other.jinja' %}",
		"{% import 'macros.jinja' as m %}",
		"{% from 'macros.jinja' import m %}",
		"{% extends '/etc/passwd' %}",
	} {
		_, err := Parse(src)
		if !errors.Is(err, ErrUnsafe) {
			t.Errorf("Parse(%q): %v, want ErrUnsafe", src, err)
		}
	}
}

func TestParseLimits(t *testing.T) {
	cases := []struct {
		name string
		src  string
		want error
	}{
		{"too large", strings.Repeat("x", maxTemplateSize+1), ErrLimit},
		{"deep brackets", "{{ " + strings.Repeat("(", 150) + "1" + strings.Repeat(")", 150) + " }}", ErrSyntax},
		{"deep expression", "{{ " + strings.Repeat("not ", 300) + "x }}", ErrSyntax},
		{"deep blocks", strings.Repeat("{% if x %}", 150) + strings.Repeat("{% endif %}", 150), ErrSyntax},
		{"reserved name", "{{ __churon_out('x') }}", ErrSyntax},
		{"reserved loop name", "{% for __churon_x in [1] %}{% endfor %}", ErrSyntax},
		{"invalid utf-8", "{{ 'a' }}\xff", ErrSyntax},
		{"unclosed tag", "{{ 'a' ", ErrSyntax},
		{"unclosed comment", "{# ", ErrSyntax},
		{"unknown statement", "{% with a = 1 %}{% endwith %}", ErrSyntax},
		{"empty output", "{{ }}", ErrSyntax},
		{"unbalanced", "{{ (1 }}", ErrSyntax},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse(c.src)
			if c.want != nil && !errors.Is(err, c.want) {
				t.Errorf("Parse: %v, want %v", err, c.want)
			}
		})
	}
}

func TestOptionsExtraValidation(t *testing.T) {
	tmpl, err := Parse("{{ x }}")
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"messages", "add_generation_prompt", "bos_token", "raise_exception", "range", "__churon_out"} {
		if _, err := tmpl.Render(context.Background(), nil, Options{Extra: map[string]any{key: 1}}); err == nil {
			t.Errorf("Extra[%q] accepted, want an error (reserved)", key)
		}
	}
	if _, err := tmpl.Render(context.Background(), nil, Options{Extra: map[string]any{"x": make(chan int)}}); err == nil {
		t.Error("a channel in Extra was accepted")
	}
	if _, err := tmpl.Render(context.Background(), nil, Options{Extra: map[string]any{"x": []byte("{}")}}); err == nil {
		t.Error("[]byte in Extra was accepted")
	}
	var nilTmpl *Template
	if _, err := nilTmpl.Render(context.Background(), nil, Options{}); err == nil {
		t.Error("nil template rendered")
	}
}
