package export

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// WriteText writes one chat as plain text: a header, then each message
// after a line naming who wrote it. Text is written as stored.
func WriteText(w io.Writer, chat Chat, opt Options) error {
	bw := bufio.NewWriter(w)
	c := chat.Conversation
	t := oneLine(title(c))
	fmt.Fprintf(bw, "%s\n%s\n", t, strings.Repeat("=", max(3, utf8.RuneCountInString(t))))
	if s := showTime(c.Created, opt); s != "" {
		fmt.Fprintf(bw, "Created: %s\n", s)
	}
	if s := showTime(c.Updated, opt); s != "" {
		fmt.Fprintf(bw, "Updated: %s\n", s)
	}
	if ms := modelNames(chat); len(ms) > 0 {
		fmt.Fprintf(bw, "Model: %s\n", strings.Join(ms, ", "))
	}
	fmt.Fprintf(bw, "Messages: %d\n", len(chat.Messages))
	if c.SystemPrompt != "" {
		fmt.Fprintf(bw, "\n-- System prompt --\n")
		writeText(bw, c.SystemPrompt)
	}
	for _, m := range chat.Messages {
		fmt.Fprintf(bw, "\n-- %s --\n", messageHeading(m, opt))
		writeText(bw, m.Content)
		if f := footerOf(m); !opt.NoMetadata && !f.empty() {
			fmt.Fprintf(bw, "[%s]\n", f.String())
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("export: text: %w", err)
	}
	return nil
}

func writeText(w *bufio.Writer, s string) {
	w.WriteString(s)
	if s != "" && !strings.HasSuffix(s, "\n") {
		w.WriteByte('\n')
	}
}
