package chat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

func mustParse(t *testing.T, src string) *Template {
	t.Helper()
	tmpl, err := Parse(src)
	if err != nil {
		t.Fatalf("Parse(%q): %v", src, err)
	}
	return tmpl
}

func TestFallback(t *testing.T) {
	f := Fallback()
	if !f.IsFallback() {
		t.Error("Fallback().IsFallback() = false")
	}
	if Fallback() != f {
		t.Error("Fallback returns a new template on each call")
	}
	if mustParse(t, f.Source()).IsFallback() {
		t.Error("a parsed template reports IsFallback")
	}
	msgs := []Message{
		{Role: "system", Content: "You are helpful."},
		{Role: "user", Content: "안녕하세요! 😊"},
		{Role: "assistant", Content: "네, 안녕하세요."},
		{Role: "user", Content: "Go로 hello world?"},
	}
	want := "<|im_start|>system\nYou are helpful.<|im_end|>\n" +
		"<|im_start|>user\n안녕하세요! 😊<|im_end|>\n" +
		"<|im_start|>assistant\n네, 안녕하세요.<|im_end|>\n" +
		"<|im_start|>user\nGo로 hello world?<|im_end|>\n"
	got, err := f.Render(context.Background(), msgs, Options{})
	if err != nil || got != want {
		t.Errorf("no generation prompt: %q, %v\nwant %q", got, err, want)
	}
	got, err = f.Render(context.Background(), msgs, Options{AddGenerationPrompt: true})
	if err != nil || got != want+"<|im_start|>assistant\n" {
		t.Errorf("generation prompt: %q, %v", got, err)
	}
}

func TestKoreanRoundTrip(t *testing.T) {
	korean := "학습이 완료된 모델을 사용해 새로운 데이터에 대한 예측을 수행합니다. 한글 자모: ㄱㄴㄷ ㅏㅑ, 이모지 😊, 코드 `x := \"값\"`\n"
	tmpl := mustParse(t, "{% for m in messages %}[{{ m.content }}]{{ m.content | tojson }}{{ m.content | length }}{% endfor %}")
	got, err := tmpl.Render(context.Background(), []Message{{Role: "user", Content: korean}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	quoted, _ := json.Marshal(korean) // no HTML characters here, so Go and Python agree
	want := "[" + korean + "]" + strings.ReplaceAll(string(quoted), `\u003c`, "<") + fmt.Sprint(len([]rune(korean)))
	if got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	got, err = Fallback().Render(context.Background(), []Message{{Role: "user", Content: korean}}, Options{})
	if err != nil || !strings.Contains(got, "\n"+korean+"<|im_end|>") {
		t.Errorf("fallback lost the Korean text: %q, %v", got, err)
	}
}

func TestMessageFieldsAndToolCalls(t *testing.T) {
	tmpl := mustParse(t, "{% for m in messages %}{{ m.role }}|{{ m.reasoning_content is defined }}|{{ m.name is defined }}|"+
		"{{ m.tool_call_id is defined }}|{{ m.tool_calls is defined }}{% if m.tool_calls %}|{{ m.tool_calls | tojson }}{% endif %}|{{ m | tojson }}\n{% endfor %}")
	msgs := []Message{
		{Role: "user", Content: "hi"},
		{Role: "assistant", ReasoningContent: "think", ToolCalls: []ToolCall{
			{ID: "call_1", Name: "get_weather", Arguments: json.RawMessage(`{"city": "서울", "unit": "celsius"}`)},
			{Name: "now"},
		}},
		{Role: "tool", Content: `{"temperature": -3}`, Name: "get_weather", ToolCallID: "call_1"},
		{Role: "assistant", ToolCalls: []ToolCall{{Name: "f", Arguments: json.RawMessage(`"{\"a\": 1}"`)}}},
	}
	// Rendered by Python's jinja2 with the equivalent Hugging Face dicts.
	want := "user|False|False|False|False|{\"role\": \"user\", \"content\": \"hi\"}\nassistant|True|False|False|True|[{\"id\": \"call_1\", \"type\": \"function\", \"function\": {\"name\": \"get_weather\", \"arguments\": {\"city\": \"서울\", \"unit\": \"celsius\"}}}, {\"type\": \"function\", \"function\": {\"name\": \"now\", \"arguments\": {}}}]|{\"role\": \"assistant\", \"content\": \"\", \"reasoning_content\": \"think\", \"tool_calls\": [{\"id\": \"call_1\", \"type\": \"function\", \"function\": {\"name\": \"get_weather\", \"arguments\": {\"city\": \"서울\", \"unit\": \"celsius\"}}}, {\"type\": \"function\", \"function\": {\"name\": \"now\", \"arguments\": {}}}]}\ntool|False|True|True|False|{\"role\": \"tool\", \"content\": \"{\\\"temperature\\\": -3}\", \"name\": \"get_weather\", \"tool_call_id\": \"call_1\"}\nassistant|False|False|False|True|[{\"type\": \"function\", \"function\": {\"name\": \"f\", \"arguments\": \"{\\\"a\\\": 1}\"}}]|{\"role\": \"assistant\", \"content\": \"\", \"tool_calls\": [{\"type\": \"function\", \"function\": {\"name\": \"f\", \"arguments\": \"{\\\"a\\\": 1}\"}}]}\n"
	got, err := tmpl.Render(context.Background(), msgs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	bad := []Message{{Role: "assistant", ToolCalls: []ToolCall{{Name: "f", Arguments: json.RawMessage(`{"a": `)}}}}
	if _, err := tmpl.Render(context.Background(), bad, Options{}); err == nil {
		t.Error("invalid tool call arguments were accepted")
	}
}

func TestExtraValues(t *testing.T) {
	tmpl := mustParse(t, "{{ m | tojson }}|{{ r | tojson }}|{{ s }}|{{ n }}|{{ f }}|{{ b }}|{{ u }}|{{ nothing }}|{{ tools }}|{{ enable_thinking is defined }}")
	got, err := tmpl.Render(context.Background(), nil, Options{Extra: map[string]any{
		"m":   map[string]any{"z": 1, "a": []string{"x", "y"}}, // Go map: keys sorted
		"r":   json.RawMessage(`{"z": 1, "a": {"k": [true, null, 1.5, 2]}}`),
		"s":   "문자열",
		"n":   int32(-7),
		"f":   2.5,
		"b":   true,
		"u":   uint8(200),
		"nil": nil,
	}})
	want := `{"a": ["x", "y"], "z": 1}|{"z": 1, "a": {"k": [true, null, 1.5, 2]}}|문자열|-7|2.5|True|200||None|False`
	if err != nil || got != want {
		t.Errorf("got  %q, %v\nwant %q", got, err, want)
	}
}

func TestRaiseException(t *testing.T) {
	tmpl := mustParse(t, "{% if messages[0].role != 'user' %}{{ raise_exception('첫 메시지는 user여야 합니다: ' ~ messages[0].role) }}{% endif %}ok")
	_, err := tmpl.Render(context.Background(), []Message{{Role: "system", Content: "x"}}, Options{})
	var te *TemplateError
	if !errors.As(err, &te) {
		t.Fatalf("error %v is not a *TemplateError", err)
	}
	if te.Message != "첫 메시지는 user여야 합니다: system" || !strings.Contains(err.Error(), te.Message) {
		t.Errorf("message %q, error %q", te.Message, err)
	}
	got, err := tmpl.Render(context.Background(), []Message{{Role: "user", Content: "x"}}, Options{})
	if err != nil || got != "ok" {
		t.Errorf("%q, %v", got, err)
	}
}

func TestStrftimeNow(t *testing.T) {
	tmpl := mustParse(t, "{{ strftime_now('%d %b %Y') }}")
	got, err := tmpl.Render(context.Background(), nil, Options{Now: goldenNow})
	if err != nil || got != "29 Nov 2026" {
		t.Errorf("injected clock: %q, %v", got, err)
	}
	before := time.Now().Format("02 Jan 2006")
	got, err = tmpl.Render(context.Background(), nil, Options{})
	after := time.Now().Format("02 Jan 2006")
	if err != nil || (got != before && got != after) {
		t.Errorf("default clock: %q, %v; want %q", got, err, before)
	}
	// glibc's padding flags and the directives chat templates use.
	at := time.Date(2024, 3, 5, 7, 8, 9, 0, time.UTC)
	for format, want := range map[string]string{
		"%Y-%m-%d %H:%M:%S":    "2024-03-05 07:08:09",
		"%-d %B %Y, %A":        "5 March 2024, Tuesday",
		"%e|%_m|%I%p|%j|%y|%%": " 5| 3|07AM|065|24|%",
		"%a %b %c":             "Tue Mar Tue Mar  5 07:08:09 2024",
		"%F %T %D %Q %z%Z":     "2024-03-05 07:08:09 03/05/24 %Q ",
		"%U %W %w %u %V %G":    "09 10 2 2 10 2024",
	} {
		if got := pyStrftime(at, format); got != want {
			t.Errorf("%q: got %q, want %q", format, got, want)
		}
	}
}

func TestPyFormatting(t *testing.T) {
	for f, want := range map[float64]string{
		1: "1.0", 0.1: "0.1", 1e16: "1e+16", 1e15: "1000000000000000.0", 1.5e-5: "1.5e-05",
		0.0001: "0.0001", 123456789.0: "123456789.0", -2.5e-300: "-2.5e-300",
	} {
		if got := pyFloatRepr(f); got != want {
			t.Errorf("pyFloatRepr(%v) = %q, want %q", f, got, want)
		}
	}
	for s, want := range map[string]string{
		"a":           `'a'`,
		"it's":        `"it's"`,
		`'"`:          `'\'"'`,
		"x\n\t\\":     `'x\n\t\\'`,
		"\x01\u00a0한": `'\x01\xa0한'`,
	} {
		if got := pyStrRepr(s); got != want {
			t.Errorf("pyStrRepr(%q) = %s, want %s", s, got, want)
		}
	}
}

func TestConcurrentRenders(t *testing.T) {
	tmpl := mustParse(t, "{% set ns = namespace(n=0) %}{% for m in messages %}{% set ns.n = ns.n + 1 %}{{ m.content }}{% endfor %}:{{ ns.n }}")
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				msgs := []Message{{Role: "user", Content: fmt.Sprint(g)}, {Role: "user", Content: fmt.Sprint(i)}}
				got, err := tmpl.Render(context.Background(), msgs, Options{})
				if want := fmt.Sprintf("%d%d:2", g, i); err != nil || got != want {
					errs <- fmt.Errorf("got %q, %v; want %q", got, err, want)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestBOSAndEOS(t *testing.T) {
	tmpl := mustParse(t, "{{ bos_token is defined }}{{ bos_token }}|{{ eos_token }}")
	got, err := tmpl.Render(context.Background(), nil, Options{BOS: "<s>", EOS: "</s>"})
	if err != nil || got != "True<s>|</s>" {
		t.Errorf("%q, %v", got, err)
	}
	got, err = tmpl.Render(context.Background(), nil, Options{})
	if err != nil || got != "False|" {
		t.Errorf("empty tokens should be undefined: %q, %v", got, err)
	}
}

func TestStrftimeYearStart(t *testing.T) {
	// Python: datetime(2026, 1, 1).strftime(...) (a Thursday at midnight).
	if got, want := pyStrftime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), "%U %W %V %G %j %I %p"), "00 00 01 2026 001 12 AM"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
