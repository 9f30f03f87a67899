package chat

import (
	"context"
	"testing"
	"time"
)

// FuzzTemplate feeds arbitrary template sources through Parse and Render:
// a model file is untrusted input, so neither may panic, hang or produce
// unbounded output, whatever the template says.
func FuzzTemplate(f *testing.F) {
	for _, seed := range []string{
		Fallback().Source(),
		"{% for m in messages %}{{ m.role }}: {{ m.content | trim }}\n{% endfor %}",
		"{{ raise_exception('no') }}",
		"{% set ns = namespace(x=1) %}{% for i in range(3) %}{% set ns.x = ns.x * 2 %}{% endfor %}{{ ns.x }}",
		"{{ messages | tojson }}{{ bos_token ~ eos_token }}",
		"{% macro f(n) %}{{ f(n) }}{% endmacro %}{{ f(1) }}",
		"{{ 'ab' * 1000000000 }}",
		"{%- if add_generation_prompt -%}<|assistant|>{%- endif -%}",
		"{{ strftime_now('%d %b %Y') }} {{ messages[0]['content'][1:3] }}",
		"{% for i in range(10**12) %}x{% endfor %}",
	} {
		f.Add(seed)
	}
	msgs := []Message{{Role: "system", Content: "be brief"}, {Role: "user", Content: "안녕하세요 <script>"}}
	f.Fuzz(func(t *testing.T, src string) {
		tmpl, err := Parse(src)
		if err != nil {
			return
		}
		opt := Options{AddGenerationPrompt: true, BOS: "<s>", EOS: "</s>", MaxOutput: 1 << 16, Timeout: 500 * time.Millisecond}
		out, err := tmpl.Render(context.Background(), msgs, opt)
		if err == nil && len(out) > opt.MaxOutput {
			t.Fatalf("output of %d bytes passed the %d-byte limit", len(out), opt.MaxOutput)
		}
	})
}
