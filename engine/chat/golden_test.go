package chat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/churon/churon/internal/testdata"
)

// goldenFile is testdata/templates/chat_template.<model>.json.
type goldenFile struct {
	Template   string          `json:"template"`
	BOS        *string         `json:"bos_token"`
	EOS        *string         `json:"eos_token"`
	Cases      []goldenCase    `json:"cases"`
	ErrorCases []goldenCase    `json:"error_cases"`
	Renderer   json.RawMessage `json:"renderer"`
}

type goldenCase struct {
	Name                string                     `json:"name"`
	Messages            []json.RawMessage          `json:"messages"`
	AddGenerationPrompt bool                       `json:"add_generation_prompt"`
	ExtraKwargs         map[string]json.RawMessage `json:"extra_kwargs"`
	Expected            *string                    `json:"expected"`
	ExpectedError       string                     `json:"expected_error"`
}

type goldenMessage struct {
	Role             string `json:"role"`
	Content          string `json:"content"`
	ReasoningContent string `json:"reasoning_content"`
	Name             string `json:"name"`
	ToolCallID       string `json:"tool_call_id"`
	ToolCalls        []struct {
		ID       string `json:"id"`
		Type     string `json:"type"`
		Function struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
}

// goldenNow is the clock the goldens were made with.
var goldenNow = func() time.Time { return time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC) }

func loadGoldens(t testing.TB) map[string]goldenFile {
	t.Helper()
	dir := filepath.Join(testdata.Dir(t), "templates")
	paths, err := filepath.Glob(filepath.Join(dir, "chat_template.*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) < 5 {
		t.Fatalf("found %d golden files in %s, want at least 5", len(paths), dir)
	}
	out := map[string]goldenFile{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var f goldenFile
		if err := json.Unmarshal(b, &f); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		name := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(p), "chat_template."), ".json")
		out[name] = f
	}
	return out
}

// messages converts a golden case's messages, failing on any field the
// Message type cannot carry (it would be dropped silently otherwise).
func (c goldenCase) messages(t *testing.T) []Message {
	t.Helper()
	known := map[string]bool{"role": true, "content": true, "reasoning_content": true, "name": true, "tool_call_id": true, "tool_calls": true}
	var msgs []Message
	for _, raw := range c.Messages {
		var keys map[string]json.RawMessage
		if err := json.Unmarshal(raw, &keys); err != nil {
			t.Fatal(err)
		}
		for k := range keys {
			if !known[k] {
				t.Fatalf("golden message has field %q that Message cannot carry", k)
			}
		}
		var gm goldenMessage
		if err := json.Unmarshal(raw, &gm); err != nil {
			t.Fatal(err)
		}
		m := Message{Role: gm.Role, Content: gm.Content, ReasoningContent: gm.ReasoningContent, Name: gm.Name, ToolCallID: gm.ToolCallID}
		for _, tc := range gm.ToolCalls {
			if tc.Type != "function" {
				t.Fatalf("tool call type %q", tc.Type)
			}
			m.ToolCalls = append(m.ToolCalls, ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
		}
		msgs = append(msgs, m)
	}
	return msgs
}

func (c goldenCase) options(f goldenFile) Options {
	opt := Options{AddGenerationPrompt: c.AddGenerationPrompt, Now: goldenNow}
	if f.BOS != nil {
		opt.BOS = *f.BOS
	}
	if f.EOS != nil {
		opt.EOS = *f.EOS
	}
	if len(c.ExtraKwargs) > 0 {
		opt.Extra = map[string]any{}
		for k, v := range c.ExtraKwargs {
			opt.Extra[k] = v // json.RawMessage: key order kept
		}
	}
	return opt
}

// subtestName tells apart cases that share a name: file/case/gen|nogen,
// then the extra keyword arguments.
func (c goldenCase) subtestName(file string) string {
	name := file + "/" + c.Name + "/" + pick(c.AddGenerationPrompt, "gen", "nogen")
	var keys []string
	for k := range c.ExtraKwargs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := string(c.ExtraKwargs[k])
		if len(v) > 12 {
			v = "…"
		}
		name += "/" + k + "=" + v
	}
	return name
}

func TestGoldens(t *testing.T) {
	files := loadGoldens(t)
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	total := 0
	for _, file := range names {
		f := files[file]
		tmpl, err := Parse(f.Template)
		if err != nil {
			t.Errorf("%s: Parse: %v", file, err)
			continue
		}
		total += checkGolden(t, file, f, tmpl)
	}
	if total < 60 {
		t.Errorf("ran %d golden cases, expected more than 60", total)
	}
}

// checkGolden renders every case of one golden file with tmpl, one
// subtest each: the cases must give Hugging Face's bytes exactly, the
// error cases must raise the template's own message. It returns how many
// cases ran.
func checkGolden(t *testing.T, file string, f goldenFile, tmpl *Template) int {
	for _, c := range f.Cases {
		t.Run(c.subtestName(file), func(t *testing.T) {
			if c.Expected == nil {
				t.Fatal("golden case has no expected text")
			}
			got, err := tmpl.Render(context.Background(), c.messages(t), c.options(f))
			if err != nil {
				t.Fatalf("Render: %v", err)
			}
			if got != *c.Expected {
				t.Errorf("mismatch\n got: %q\nwant: %q\n%s", got, *c.Expected, firstDiff(got, *c.Expected))
			}
		})
	}
	for _, c := range f.ErrorCases {
		t.Run(c.subtestName(file)+"/error", func(t *testing.T) {
			got, err := tmpl.Render(context.Background(), c.messages(t), c.options(f))
			if err == nil {
				t.Fatalf("Render succeeded with %q, want an error", got)
			}
			var te *TemplateError
			if !errors.As(err, &te) {
				t.Fatalf("error %v is not a *TemplateError", err)
			}
			if c.ExpectedError != "" && te.Message != c.ExpectedError {
				t.Errorf("raise_exception message %q, want %q", te.Message, c.ExpectedError)
			}
			if !strings.Contains(err.Error(), te.Message) {
				t.Errorf("error text %q does not carry the message %q", err.Error(), te.Message)
			}
		})
	}
	return len(f.Cases) + len(f.ErrorCases)
}

func firstDiff(a, b string) string {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			lo := max(0, i-20)
			return fmt.Sprintf("first difference at byte %d: got %q, want %q", i, a[lo:min(len(a), i+20)], b[lo:min(len(b), i+20)])
		}
	}
	return fmt.Sprintf("one is a prefix of the other (len %d vs %d)", len(a), len(b))
}

// readTemplateGolden parses the chat template testdata/NAME.jinja and,
// where golden is not nil, decodes testdata/NAME.golden.json (the bytes
// Hugging Face's renderer gave) into it.
func readTemplateGolden(t *testing.T, name string, golden any) *Template {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("testdata", name+".jinja"))
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := Parse(string(src))
	if err != nil {
		t.Fatalf("%s.jinja: %v", name, err)
	}
	if golden != nil {
		raw, err := os.ReadFile(filepath.Join("testdata", name+".golden.json"))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(raw, golden); err != nil {
			t.Fatalf("%s.golden.json: %v", name, err)
		}
	}
	return tmpl
}
