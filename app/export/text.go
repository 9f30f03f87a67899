package export

import (
	"bufio"
	"io"
	"strings"
	"unicode/utf8"
)

// WriteText writes one chat as plain text: a header, then each message
// after a line naming who wrote it. Text is written as stored.
func WriteText(w io.Writer, chat Chat, opt Options) error {
	return writeLines(w, chat, opt, textStyle)
}

var textStyle = lineStyle{
	name:   "text",
	escape: func(s string) string { return s },
	// The title underlined with at least three "=".
	title:   func(t string) string { return t + "\n" + strings.Repeat("=", max(3, utf8.RuneCountInString(t))) + "\n" },
	item:    "%s: %s\n",
	system:  "\n-- System prompt --\n",
	heading: "\n-- %s --\n",
	footer:  "[%s]\n",
	body:    writeText,

	thinking: writeTextThinking,
}

// writeText writes s as it is, ending with a newline.
func writeText(w *bufio.Writer, s string) {
	w.WriteString(s)
	if s != "" && !strings.HasSuffix(s, "\n") {
		w.WriteByte('\n')
	}
}
