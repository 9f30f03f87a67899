package chat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/ardanlabs/jinja"
)

// Message is one turn of a conversation. Optional fields are handed to the
// template only when set, so a template's `message.tool_calls is defined`
// sees what it would see with Hugging Face's dicts.
type Message struct {
	Role    string // "system", "user", "assistant", "tool", ...
	Content string

	// ReasoningContent is an assistant's thinking kept apart from its
	// answer ("reasoning_content"; Qwen3 and DeepSeek-R1 templates read it).
	ReasoningContent string
	// Thinking is the same for gpt-oss's Harmony template, which reads an
	// assistant's analysis channel from "thinking" (and renders it only
	// before a pending tool call: Harmony drops earlier analysis).
	Thinking string
	// Name names the speaker or, in a tool result, the tool ("name").
	Name string
	// ToolCallID ties a tool result to the call it answers ("tool_call_id").
	ToolCallID string
	// ToolCalls are the calls an assistant turn makes ("tool_calls").
	ToolCalls []ToolCall
}

// ToolCall is a function call made by the assistant. The template sees it
// in Hugging Face's layout: {"id"?, "type": "function", "function":
// {"name": ..., "arguments": ...}}.
type ToolCall struct {
	ID   string // omitted when empty
	Name string
	// Arguments is JSON: usually an object, which the template gets as a
	// dict with its key order kept; a JSON string reaches the template as
	// a string. Empty means {}.
	Arguments json.RawMessage
}

// Options control one render.
type Options struct {
	// AddGenerationPrompt asks the template to end with the header of the
	// assistant's next turn.
	AddGenerationPrompt bool
	// BOS and EOS are the model's special token texts (bos_token,
	// eos_token); an empty one is left undefined, as Hugging Face leaves a
	// null token.
	BOS, EOS string
	// Now is strftime_now's clock; nil means time.Now.
	Now func() time.Time
	// Extra holds further template variables, e.g. "enable_thinking": false
	// or "tools". Values may be Go scalars, slices, string-keyed maps (their
	// keys are sorted: Go maps have no order) or json.RawMessage (decoded
	// with its key order kept: use it for tool schemas, whose order shows
	// in the prompt). "tools" and "documents" default to None.
	Extra map[string]any
	// MaxOutput bounds the rendered prompt in bytes; 0 means
	// DefaultMaxOutput, and more than 1 GiB means 1 GiB.
	MaxOutput int
	// Timeout bounds the render; 0 means DefaultTimeout.
	Timeout time.Duration
}

// Defaults for Options.MaxOutput and Options.Timeout. A megabyte is a
// quarter of a million tokens or more; two seconds is a thousand times what
// a long conversation takes to render.
const (
	DefaultMaxOutput = 1 << 20
	DefaultTimeout   = 2 * time.Second
	maxMaxOutput     = 1 << 30
)

// Template is a parsed chat template. It is immutable and safe for
// concurrent use; each Render has its own state.
type Template struct {
	src      string
	prog     *jinja.Template
	fallback bool
}

// Parse parses a chat template (tokenizer.chat_template). Errors wrap
// ErrSyntax, or ErrUnsafe for templates that try to load other templates.
func Parse(src string) (*Template, error) {
	if len(src) > maxTemplateSize {
		return nil, fmt.Errorf("chat: parse: %w: template is %d bytes, more than %d", ErrLimit, len(src), maxTemplateSize)
	}
	if !utf8.ValidString(src) {
		return nil, fmt.Errorf("%w: template is not valid UTF-8", ErrSyntax)
	}
	segs, err := lex(src)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSyntax, err)
	}
	prog, err := translate(segs)
	if err != nil {
		if errors.Is(err, ErrUnsafe) {
			return nil, fmt.Errorf("chat: parse: %w", err)
		}
		return nil, fmt.Errorf("%w: %w", ErrSyntax, err)
	}
	compiled, err := compile(prog)
	if err != nil {
		return nil, fmt.Errorf("%w: engine: %w", ErrSyntax, err)
	}
	return &Template{src: src, prog: compiled}, nil
}

func compile(prog string) (t *jinja.Template, err error) {
	defer func() {
		if p := recover(); p != nil {
			t, err = nil, fmt.Errorf("panic while compiling: %v", p)
		}
	}()
	return jinja.Compile(prog)
}

// fallbackSource is the ChatML template Hugging Face used as its default
// before templates became mandatory; llama.cpp also falls back to ChatML.
const fallbackSource = "{% for message in messages %}" +
	"{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}" +
	"{% endfor %}" +
	"{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"

var fallback = sync.OnceValue(func() *Template {
	t, err := Parse(fallbackSource)
	if err != nil {
		// Unreachable (a test parses it); a template that fails every
		// render is still better than a nil one.
		return &Template{src: fallbackSource, fallback: true}
	}
	t.fallback = true
	return t
})

// Fallback returns the template used for models that ship none: ChatML
// (<|im_start|>role\ncontent<|im_end|>\n). IsFallback reports it, so
// callers can warn that the prompt format is a guess.
func Fallback() *Template { return fallback() }

// IsFallback reports whether t is Fallback's guess rather than the model's.
func (t *Template) IsFallback() bool { return t != nil && t.fallback }

// Source returns the template text t was parsed from.
func (t *Template) Source() string {
	if t == nil {
		return ""
	}
	return t.src
}

// reserved are the names a caller cannot set through Options.Extra.
var reserved = map[string]bool{
	"messages": true, "add_generation_prompt": true, "bos_token": true, "eos_token": true,
	"raise_exception": true, "strftime_now": true, "range": true, "namespace": true,
}

// Render formats msgs. The render is sandboxed: it reads no files, and
// stops with an error (ErrLimit, ErrOutputTooLarge, ErrTimeout, ctx's
// error) instead of running away. A template's raise_exception comes back
// as a *TemplateError.
//
// The engine cannot be interrupted from outside, so the render runs on its
// own goroutine and Render returns as soon as ctx or the timeout ends; the
// goroutine stops at its next loop iteration, output or macro call, which
// every template reaches quickly unless a single builtin filter is chewing
// on a huge value.
func (t *Template) Render(ctx context.Context, msgs []Message, opt Options) (string, error) {
	if t == nil || t.prog == nil {
		return "", errors.New("chat: render: no template")
	}
	if ctx == nil {
		ctx = context.Background()
	}
	maxOut := opt.MaxOutput
	if maxOut <= 0 {
		maxOut = DefaultMaxOutput
	}
	maxOut = min(maxOut, maxMaxOutput)
	timeout := opt.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	now := opt.Now
	if now == nil {
		now = time.Now
	}
	g := newGuard(maxOut, now)
	data, err := renderData(g, msgs, opt)
	if err != nil {
		return "", err
	}

	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	stop := context.AfterFunc(rctx, func() { g.stopped.Store(true) })
	defer stop()

	type result struct {
		out string
		err error
	}
	done := make(chan result, 1)
	go func() {
		var r result
		defer func() {
			if p := recover(); p != nil {
				r = result{err: fmt.Errorf("engine panic: %v", p)}
			}
			done <- r
		}()
		r.out, r.err = t.prog.RenderValues(data)
	}()

	stopped := func() error {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("chat: render: %w", err)
		}
		return fmt.Errorf("%w after %v: %w", ErrTimeout, timeout, context.DeadlineExceeded)
	}
	select {
	case <-rctx.Done():
		return "", stopped()
	case r := <-done:
		// Receiving r orders the goroutine's writes to g before these reads.
		switch {
		case g.err == errStopped:
			return "", stopped()
		case g.err != nil:
			return "", renderError(g.err)
		case r.err != nil:
			return "", renderError(r.err)
		case len(r.out) > maxOut:
			return "", fmt.Errorf("%w: %d bytes, limit %d", ErrOutputTooLarge, len(r.out), maxOut)
		}
		return r.out, nil
	}
}

func renderError(err error) error {
	var te *TemplateError
	if errors.As(err, &te) || errors.Is(err, ErrLimit) || errors.Is(err, ErrUnsafe) {
		return err
	}
	return fmt.Errorf("chat: render: %w", err)
}

func renderData(g *guard, msgs []Message, opt Options) (map[string]jinja.Value, error) {
	data := g.functions()
	m, err := messagesValue(msgs)
	if err != nil {
		return nil, err
	}
	data["messages"] = m
	data["add_generation_prompt"] = jinja.NewBool(opt.AddGenerationPrompt)
	data["tools"] = jinja.None()
	data["documents"] = jinja.None()
	if opt.BOS != "" {
		data["bos_token"] = jinja.NewString(opt.BOS)
	}
	if opt.EOS != "" {
		data["eos_token"] = jinja.NewString(opt.EOS)
	}
	for k, v := range opt.Extra {
		if reserved[k] || strings.HasPrefix(k, hookPrefix) {
			return nil, fmt.Errorf("chat: Options.Extra[%q]: the name is reserved", k)
		}
		val, err := goValue(v, 0)
		if err != nil {
			return nil, fmt.Errorf("chat: Options.Extra[%q]: %w", k, err)
		}
		data[k] = val
	}
	return data, nil
}
