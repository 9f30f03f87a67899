package export

import (
	"bufio"
	"fmt"
	"html"
	"strings"
	"time"

	"github.com/churon/churon/app/store"
)

// An answer's reasoning (a thinking model's <think> block, gpt-oss's
// analysis channel) is exported before its answer, marked as thinking so
// that a reader never takes it for the answer.

// thinkingLabel is "Thinking · 120 tokens · 3.2 s".
func thinkingLabel(m store.Message) string {
	parts := []string{"Thinking"}
	if m.ReasoningTokens > 0 {
		parts = append(parts, fmt.Sprintf("%d tokens", m.ReasoningTokens))
	}
	if m.ReasoningTime > 0 {
		parts = append(parts, fmt.Sprintf("%.1f s", m.ReasoningTime.Seconds()))
	}
	return strings.Join(parts, " · ")
}

// writeMarkdownThinking folds the reasoning into a <details> block, which
// Markdown renderers show collapsed and plain readers still see marked.
func writeMarkdownThinking(w *bufio.Writer, m store.Message) {
	fmt.Fprintf(w, "<details>\n<summary>%s</summary>\n\n", html.EscapeString(thinkingLabel(m)))
	writeBody(w, m.Reasoning)
	w.WriteString("\n</details>\n\n")
}

// writeTextThinking brackets the reasoning.
func writeTextThinking(w *bufio.Writer, m store.Message) {
	fmt.Fprintf(w, "[%s]\n", thinkingLabel(m))
	writeText(w, m.Reasoning)
	w.WriteString("[/Thinking]\n\n")
}

// writeHTMLThinking is a collapsed <details> section.
func writeHTMLThinking(w *bufio.Writer, m store.Message) {
	fmt.Fprintf(w, "<details class=\"thinking\"><summary>%s</summary><div class=\"body plain\">%s</div></details>\n",
		html.EscapeString(thinkingLabel(m)), html.EscapeString(m.Reasoning))
}

func reasoningMs(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
