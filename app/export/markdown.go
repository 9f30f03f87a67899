package export

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"unicode"

	"github.com/churon/churon/app/store"
)

// WriteMarkdown writes one chat as Markdown: a header (title, dates,
// models, system prompt), then each message under a level-2 heading
// naming who wrote it. Message text is written exactly as stored: an
// answer's own Markdown, code fences included, is the export's Markdown.
// The one addition: when an answer ends inside a code fence (cut off
// mid-code), a closing fence follows it, or the rest of the document would
// be swallowed into the code block.
func WriteMarkdown(w io.Writer, chat Chat, opt Options) error {
	return writeLines(w, chat, opt, markdownStyle)
}

var markdownStyle = lineStyle{
	name:    "markdown",
	escape:  mdEscape,
	title:   func(t string) string { return "# " + t + "\n\n" },
	item:    "- %s: %s\n",
	system:  "\n## System prompt\n\n",
	heading: "\n---\n\n## %s\n\n",
	footer:  "\n*%s*\n",
	body:    writeBody,

	thinking: writeMarkdownThinking,
}

// messageHeading is "You · 2026-01-02 15:04 +09:00", with the model for
// answers.
func messageHeading(m store.Message, opt Options) string {
	parts := []string{roleName(m)}
	if m.Role == store.RoleAssistant && m.Model != "" {
		parts = append(parts, modelLabel(m.Model, m.Quant))
	}
	if s := showTime(m.Created, opt); s != "" {
		parts = append(parts, s)
	}
	if v := versionNote(m); v != "" {
		parts = append(parts, v)
	}
	return strings.Join(parts, " · ")
}

// versionNote is "version 2 of 3" for a message with other versions: the
// readable exports show the branch shown, and say that there is more.
func versionNote(m store.Message) string {
	if m.Versions < 2 {
		return ""
	}
	return fmt.Sprintf("version %d of %d", m.Version, m.Versions)
}

// writeBody writes text as it is, ending with a newline, and closes a
// code fence the text left open.
func writeBody(w *bufio.Writer, text string) {
	writeText(w, text)
	if f := openFence(text); f != "" {
		w.WriteString(f + "\n")
	}
}

// openFence returns the fence that closes a fenced code block left open
// at the end of text ("" when none is open). It follows CommonMark for
// top-level fences: an opening line is up to three spaces, then three or
// more backticks or tildes (backticks: with no backtick in the info
// string); a closing line is the same character, at least as many, and
// nothing but spaces after. Fences nested deeper (in a list item or a
// quote) end with their container, so they cannot swallow what follows.
func openFence(text string) string {
	var ch byte
	n := 0
	for line := range strings.Lines(text) {
		line = strings.TrimRight(line, "\r\n")
		indent := len(line) - len(strings.TrimLeft(line, " "))
		if indent > 3 {
			continue
		}
		rest := line[indent:]
		if rest == "" || (rest[0] != '`' && rest[0] != '~') {
			continue
		}
		c := rest[0]
		k := len(rest) - len(strings.TrimLeft(rest, string(c)))
		if k < 3 {
			continue
		}
		info := rest[k:]
		if n == 0 {
			if c == '`' && strings.Contains(info, "`") {
				continue
			}
			ch, n = c, k
			continue
		}
		if c == ch && k >= n && strings.TrimSpace(info) == "" {
			n = 0
		}
	}
	if n == 0 {
		return ""
	}
	return strings.Repeat(string(ch), n)
}

// oneLine joins the lines of s with spaces (a heading is one line).
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// mdEscape escapes the characters that would make text of ours (titles,
// model names, the metadata line) Markdown or HTML. '_' and '&' are
// escaped only where they could act (at a word's edge; before a name or
// '#'), so that "q4_k_m" stays readable in the source.
func mdEscape(s string) string {
	rs := []rune(s)
	var b strings.Builder
	word := func(i int) bool {
		return i >= 0 && i < len(rs) && (unicode.IsLetter(rs[i]) || unicode.IsDigit(rs[i]))
	}
	for i, r := range rs {
		esc := strings.ContainsRune("\\`*[]<>#|~", r)
		switch r {
		case '_':
			esc = !word(i-1) || !word(i+1)
		case '&':
			esc = word(i+1) || (i+1 < len(rs) && rs[i+1] == '#')
		}
		if esc {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
