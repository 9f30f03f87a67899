// Package chat renders a model's chat template (the GGUF key
// tokenizer.chat_template, a Jinja2 template) into the prompt text, byte for
// byte as Hugging Face's apply_chat_template does: Python jinja2's
// ImmutableSandboxedEnvironment with trim_blocks and lstrip_blocks, the
// loopcontrols extension, raise_exception, strftime_now and a tojson that
// is json.dumps(ensure_ascii=False) keeping key order.
//
//	tmpl, err := chat.Parse(src) // or chat.Fallback() when the model has none
//	prompt, err := tmpl.Render(ctx, []chat.Message{
//		{Role: "system", Content: "You are a helpful assistant."},
//		{Role: "user", Content: "안녕하세요"},
//	}, chat.Options{AddGenerationPrompt: true, BOS: "<s>", EOS: "</s>"})
//
// # Engine: github.com/ardanlabs/jinja, extended from outside
//
// Two pure-Go engines were tried on the golden renderings in
// testdata/templates (68 cases: Llama 3, Qwen3, Gemma 3, Mistral Nemo,
// Phi-3). ardanlabs/jinja v1.8.0 rendered all 68 once messages were handed
// over as its ordered Dict values (its tojson keeps insertion order; keys
// are sorted only when it converts Go maps, and in its indent= path).
// gonja v2.9.1 rendered 55: it cannot parse Gemma 3's template (an inline
// if inside parentheses: "Unbalanced parenthesis"), which no option fixes,
// and its tojson sorts keys and drops the spaces after separators. gonja
// also brings logrus, json-iterator and four more modules; ardanlabs has no
// dependencies.
//
// ardanlabs/jinja is used only through its public API (Compile,
// RenderValues, Value constructors, NewCallable). Parse does not hand it
// the template as written but a translation of it, which is how this
// package fixes what the engine gets wrong and bounds what it cannot bound:
//
//   - Whitespace. The engine applies trim markers and trim_blocks to the
//     nearest text even across another tag, and knows no "+" markers. Our
//     lexer (lex.go) resolves whitespace exactly as Jinja2's lexer does,
//     and the translated program has no text at all: each text becomes an
//     output of a string literal. On 9,000 random templates mixing tags,
//     markers, comments and raw blocks the result equals Python jinja2
//     3.1.6 every time; the engine alone differs on most of them.
//   - Expressions are parsed with Jinja2's grammar (expr.go) and written
//     back fully parenthesised. Arithmetic, "~", the tojson, string, round,
//     select/reject/selectattr/rejectattr and map filters and str.join go
//     to Go functions with Python's semantics (guard.go, filters.go): the
//     engine's versions repeat strings without limit, concatenate a string
//     with anything, truncate where Python floors, panic in selectattr
//     without a test, and ignore map('upper').
//   - Hooks: every output, loop iteration and macro call calls back into
//     the render's guard, which enforces the limits below and notices
//     cancellation.
//
// Besides the goldens, the same translation was checked against Python
// jinja2 on the 17 real templates in the engine's own test data (Qwen3.x,
// Gemma 4, gpt-oss, DeepSeek V4, GLM 5, Kimi K3, Llama 3.2, Mistral, ...)
// and on Mistral Small 3.1 and DeepSeek-R1 templates, each with 17 recorded
// chat requests: no differences. Known differences that remain: tuples
// print as lists; an undefined attribute of an undefined value renders as
// "" where Jinja2 raises; namespace() and dict() see keyword arguments in
// sorted order (the engine passes them in a Go map); integers beyond 64 bits
// become floats; a handful of builtins are missing (truncate, center,
// groupby, format, urlencode, wordwrap, str.rsplit, ...) and fail the
// render with an error; "set a, b = ..." is refused at Parse.
//
// # Sandbox
//
// A chat template comes from a downloaded file, so it is treated as
// hostile. It reads no files and no network: the engine has no template
// loader, and include, import, from and extends are refused at Parse
// (ErrUnsafe). Mutating methods (append, update, pop, ...) are refused as
// in Hugging Face's immutable sandbox, and attributes can only be set on a
// namespace that does not end up containing itself, so values cannot form
// cycles. A render stops with an error instead of running away: range()
// over more than 100,000 items, more than 10 million loop iterations,
// macros nested more than 100 deep (runaway recursion), strings built by
// "*", "+" or "~" beyond max(1 MiB, 4×MaxOutput), output beyond
// Options.MaxOutput, more than 256 MiB + 64×MaxOutput allocated (read from
// the Go runtime, which counts the whole process: a render racing a large
// allocation elsewhere could trip it), or Options.Timeout / ctx ending.
//
// The engine cannot be interrupted, so Render runs it on a goroutine and
// returns as soon as the deadline passes; that goroutine may run on until
// its next hook (the next output, loop iteration, macro call or operator),
// normally microseconds later, but a single builtin filter working on a
// large value (sort, join, replace) finishes first.
package chat
