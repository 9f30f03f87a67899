package chat

import (
	"strings"
)

// What a model generates is not always all answer: Qwen3 and DeepSeek-R1
// think inside <think>…</think> before answering, and gpt-oss writes
// Harmony messages on channels (analysis: its reasoning; final: the
// answer; commentary: tool calls and preambles). An OutputParser turns
// the generated text into those parts as it streams, so that no marker
// is ever shown and reasoning can be kept apart from the answer.

// OutputFormat is how a model's generated text is laid out.
type OutputFormat uint8

const (
	// OutputPlain is all answer.
	OutputPlain OutputFormat = iota
	// OutputThink has reasoning inside <think>…</think> before the answer.
	OutputThink
	// OutputHarmony is gpt-oss's Harmony: messages with headers naming a
	// channel, between control tokens the generation must render
	// (engine.GenerateOptions.RenderSpecial).
	OutputHarmony
)

// OutputFormatOf tells the format of what a model with template t
// generates: Harmony for gpt-oss's template, think blocks for templates
// that write or strip <think>, else plain.
func OutputFormatOf(t *Template) OutputFormat {
	switch {
	case t == nil:
		return OutputPlain
	case t.Name() == "gpt-oss (Harmony)":
		return OutputHarmony
	case strings.Contains(t.src, "<think>") || strings.Contains(t.src, "</think>"):
		return OutputThink
	}
	return OutputPlain
}

// PartKind says what a Part of the output is.
type PartKind uint8

const (
	PartContent   PartKind = iota // the answer
	PartReasoning                 // thinking: <think> or Harmony's analysis channel
	PartToolCall                  // a whole tool call (Harmony's commentary to a recipient)
)

// Part is a piece of generated output. Content and reasoning come in
// increments as they stream; a tool call comes once, whole.
type Part struct {
	Kind PartKind
	Text string // the text; for a tool call its arguments (usually JSON)
	// Recipient and ContentType describe a tool call: "functions.get_weather", "json".
	Recipient, ContentType string
}

// Harmony's control tokens, as rendered text.
const (
	hStart     = "<|start|>"
	hEnd       = "<|end|>"
	hMessage   = "<|message|>"
	hChannel   = "<|channel|>"
	hConstrain = "<|constrain|>"
	hReturn    = "<|return|>"
	hCall      = "<|call|>"
)

var (
	harmonyMarkers = []string{hStart, hEnd, hMessage, hChannel, hConstrain, hReturn, hCall}
	thinkMarkers   = []string{"<think>", "</think>"}
)

// OutputParser splits one generation's text into Parts. It is not safe
// for concurrent use.
type OutputParser struct {
	format  OutputFormat
	pending string // text that may begin a marker, held back

	// Think format.
	thinking   bool
	heldNL     string // reasoning's trailing newlines, dropped at </think>
	startReas  bool   // at the start of reasoning: newlines are dropped
	afterThink bool   // at the start of the answer after </think>: newlines dropped
	reasoned   bool   // some reasoning came before

	// Harmony.
	inHeader  bool
	header    string
	channel   string
	recipient string
	ctype     string
	call      strings.Builder
	messages  int // messages begun on each of reasoning and content
	reasParts int
	contParts int
}

// NewOutputParser returns a parser for one generation in format f.
// prompt is the text the generation continues: a think-format prompt
// that ends inside <think> (templates that open the block themselves)
// starts the output in reasoning, and a Harmony prompt ends with the
// assistant's "<|start|>assistant", so its output starts in a header.
func NewOutputParser(f OutputFormat, prompt string) *OutputParser {
	p := &OutputParser{format: f}
	switch f {
	case OutputThink:
		tail := strings.TrimRight(prompt, " \n")
		if i := strings.LastIndex(tail, "<think>"); i >= 0 && !strings.Contains(tail[i:], "</think>") {
			p.thinking, p.startReas = true, true
		}
	case OutputHarmony:
		p.inHeader = true
	}
	return p
}

// Thinking reports whether the text fed so far ends inside reasoning: a
// think block, or a Harmony analysis message (its header included).
func (p *OutputParser) Thinking() bool {
	switch p.format {
	case OutputThink:
		return p.thinking
	case OutputHarmony:
		if p.inHeader {
			return strings.Contains(p.header, hChannel+"analysis")
		}
		return p.channel == "analysis" && p.recipient == ""
	}
	return false
}

// Feed takes the next generated text and returns the parts it completes.
func (p *OutputParser) Feed(text string) []Part {
	if p.format == OutputPlain {
		if text == "" {
			return nil
		}
		return []Part{{Kind: PartContent, Text: text}}
	}
	s := p.pending + text
	markers := thinkMarkers
	if p.format == OutputHarmony {
		markers = harmonyMarkers
	}
	keep := heldPrefix(s, markers)
	p.pending = s[len(s)-keep:]
	return p.scan(s[:len(s)-keep], nil)
}

// Flush ends the generation: held-back text is released and an
// unfinished tool call is emitted (the <|call|> that ends one stops the
// generation, so it may never come as text).
func (p *OutputParser) Flush() []Part {
	var out []Part
	if p.pending != "" {
		out = p.scan(p.pending, out)
		p.pending = ""
	}
	switch p.format {
	case OutputHarmony:
		if p.inHeader && strings.TrimSpace(p.header) != "" && !strings.Contains(p.header, hChannel) && p.messages == 0 {
			// No Harmony at all: what came is the answer.
			out = p.content(out, p.header)
		}
		p.header = ""
		out = p.endMessage(out)
	case OutputThink:
		// A think block cut off keeps its newlines.
		if p.heldNL != "" {
			out = append(out, Part{Kind: PartReasoning, Text: p.heldNL})
			p.heldNL = ""
		}
	}
	return merge(out)
}

// heldPrefix is the length of the end of s that could begin one of the
// markers (a "<" and what follows it, shorter than the marker).
func heldPrefix(s string, markers []string) int {
	i := strings.LastIndexByte(s, '<')
	if i < 0 {
		return 0
	}
	tail := s[i:]
	for _, m := range markers {
		if len(tail) < len(m) && strings.HasPrefix(m, tail) {
			return len(tail)
		}
	}
	return 0
}

func (p *OutputParser) scan(s string, out []Part) []Part {
	if p.format == OutputThink {
		return merge(p.scanThink(s, out))
	}
	return merge(p.scanHarmony(s, out))
}

func (p *OutputParser) scanThink(s string, out []Part) []Part {
	for s != "" {
		if p.thinking {
			i := strings.Index(s, "</think>")
			chunk := before(s, i)
			out = p.reasoning(out, chunk)
			if i < 0 {
				return out
			}
			p.thinking, p.heldNL, p.afterThink, p.reasoned = false, "", true, true
			s = s[i+len("</think>"):]
			continue
		}
		i := strings.Index(s, "<think>")
		chunk := before(s, i)
		if p.afterThink {
			chunk = strings.TrimLeft(chunk, "\n")
			if chunk != "" {
				p.afterThink = false
			}
		}
		if chunk != "" {
			out = append(out, Part{Kind: PartContent, Text: chunk})
		}
		if i < 0 {
			return out
		}
		p.thinking, p.startReas = true, true
		if p.reasoned {
			p.heldNL = "\n\n" // a second block reads as a new paragraph
		}
		s = s[i+len("<think>"):]
	}
	return out
}

// before is s up to i, or all of s where i < 0 (a marker not found).
func before(s string, i int) string {
	if i < 0 {
		return s
	}
	return s[:i]
}

// reasoning adds think-block text, dropping the block's leading and
// trailing newlines as Qwen3's template strips them.
func (p *OutputParser) reasoning(out []Part, s string) []Part {
	if p.startReas {
		s = strings.TrimLeft(s, "\n")
		if s == "" {
			return out
		}
		p.startReas = false
	}
	body := strings.TrimRight(s, "\n")
	if body != "" {
		out = append(out, Part{Kind: PartReasoning, Text: p.heldNL + body})
		p.heldNL = ""
	}
	p.heldNL += s[len(body):]
	return out
}

func (p *OutputParser) scanHarmony(s string, out []Part) []Part {
	for s != "" {
		if p.inHeader {
			i := strings.Index(s, hMessage)
			if i < 0 {
				if p.messages == 0 && !harmonyHeaderStart(p.header+s) {
					// Not Harmony at all (a model that ignores its
					// format): the text is the answer, shown as it comes.
					s = p.header + s
					p.header, p.inHeader, p.channel, p.messages = "", false, "final", 1
					continue
				}
				p.header += s
				return out
			}
			p.header += s[:i]
			p.beginMessage()
			s = s[i+len(hMessage):]
			continue
		}
		// In a message: up to the next end marker.
		i, m := firstMarker(s, hEnd, hReturn, hCall, hStart)
		chunk := before(s, i)
		out = p.body(out, chunk)
		if i < 0 {
			return out
		}
		out = p.endMessage(out)
		p.inHeader, p.header = true, ""
		s = s[i+len(m):]
	}
	return out
}

// firstMarker finds the earliest of markers in s.
func firstMarker(s string, markers ...string) (int, string) {
	at, which := -1, ""
	for _, m := range markers {
		if i := strings.Index(s, m); i >= 0 && (at < 0 || i < at) {
			at, which = i, m
		}
	}
	return at, which
}

// beginMessage reads the header just ended: "assistant<|channel|>final",
// " to=functions.f<|channel|>commentary json", "assistant<|channel|>
// commentary to=functions.f <|constrain|>json".
func (p *OutputParser) beginMessage() {
	h := p.header
	p.header, p.inHeader = "", false
	p.channel, p.recipient, p.ctype = "", "", ""
	p.call.Reset()
	if i := strings.Index(h, hStart); i >= 0 {
		h = h[i+len(hStart):]
	}
	h = strings.ReplaceAll(h, hConstrain, " ")
	before, after, _ := strings.Cut(h, hChannel)
	for _, w := range strings.Fields(before) { // the role, maybe a recipient
		if r, ok := strings.CutPrefix(w, "to="); ok {
			p.recipient = r
		}
	}
	for i, w := range strings.Fields(after) { // the channel, then a recipient or content type
		r, isTo := strings.CutPrefix(w, "to=")
		switch {
		case i == 0:
			p.channel = w
		case isTo:
			p.recipient = r
		case p.ctype == "":
			p.ctype = w
		}
	}
	p.messages++
}

// body adds message text to the part its channel makes it.
func (p *OutputParser) body(out []Part, s string) []Part {
	if s == "" {
		return out
	}
	switch {
	case p.recipient != "":
		p.call.WriteString(s)
	case p.channel == "analysis":
		out = append(out, Part{Kind: PartReasoning, Text: p.sep(&p.reasParts) + s})
	default:
		out = p.content(out, s)
	}
	return out
}

// content adds answer text.
func (p *OutputParser) content(out []Part, s string) []Part {
	return append(out, Part{Kind: PartContent, Text: p.sep(&p.contParts) + s})
}

// sep is the paragraph break that goes before the first text of a
// message when earlier messages of the same kind had text.
func (p *OutputParser) sep(n *int) string {
	if *n < 0 {
		return ""
	}
	first := *n > 0
	*n = -1 // in a message with text: no separator until it ends
	if first {
		return "\n\n"
	}
	return ""
}

// endMessage closes the current message: a tool call is emitted whole.
func (p *OutputParser) endMessage(out []Part) []Part {
	if p.recipient != "" {
		out = append(out, Part{Kind: PartToolCall, Text: p.call.String(), Recipient: p.recipient, ContentType: p.ctype})
		p.recipient = ""
		p.call.Reset()
	}
	for _, n := range []*int{&p.reasParts, &p.contParts} {
		if *n < 0 {
			*n = 1
		}
	}
	return out
}

// merge joins adjacent parts of the same streamed kind.
func merge(parts []Part) []Part {
	out := parts[:0]
	for _, x := range parts {
		if n := len(out); n > 0 && x.Kind != PartToolCall && out[n-1].Kind == x.Kind {
			out[n-1].Text += x.Text
			continue
		}
		out = append(out, x)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// SplitOutput parses a whole generation at once: its answer, its
// reasoning and its tool calls.
func SplitOutput(f OutputFormat, prompt, text string) (content, reasoning string, calls []Part) {
	p := NewOutputParser(f, prompt)
	return joinParts(append(p.Feed(text), p.Flush()...))
}

// joinParts gathers parts by kind: the answer's text, the reasoning's,
// and the tool calls in order.
func joinParts(parts []Part) (content, reasoning string, calls []Part) {
	var b, r strings.Builder
	for _, x := range parts {
		switch x.Kind {
		case PartContent:
			b.WriteString(x.Text)
		case PartReasoning:
			r.WriteString(x.Text)
		case PartToolCall:
			calls = append(calls, x)
		}
	}
	return b.String(), r.String(), calls
}

// harmonyHeaderStart reports whether h can begin the header of a
// generation after "<|start|>assistant": a marker, a recipient, or the
// role again.
func harmonyHeaderStart(h string) bool {
	h = strings.TrimLeft(h, " ")
	for _, w := range []string{"<|", "to=", "assistant"} {
		if strings.HasPrefix(h, w) || strings.HasPrefix(w, h) {
			return true
		}
	}
	return false
}
