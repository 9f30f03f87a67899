package export

import (
	"bufio"
	"fmt"
	"io"

	"github.com/churon/churon/app/store"
)

// lineStyle is how a line-oriented format marks the parts of a chat.
// Markdown and plain text lay a chat out alike (title, header, system
// prompt, then each message with its heading, text and footer) and differ
// only in these marks.
type lineStyle struct {
	name   string              // the format, in errors
	escape func(string) string // applied to our own text: title, header, headings, footers
	title  func(string) string // the title block, from the escaped title
	// Format strings: item takes a header item's label and value,
	// heading a message's heading, footer an answer's metadata line.
	item, heading, footer string
	system                string                             // what precedes the system prompt
	body                  func(*bufio.Writer, string)        // writes a message's own text
	thinking              func(*bufio.Writer, store.Message) // writes an answer's reasoning, marked
}

// writeLines writes one chat in style st.
func writeLines(w io.Writer, chat Chat, opt Options, st lineStyle) error {
	bw := bufio.NewWriter(w)
	c := chat.Conversation
	bw.WriteString(st.title(st.escape(oneLine(title(c)))))
	for _, it := range headerItems(chat, opt) {
		fmt.Fprintf(bw, st.item, it.label, st.escape(it.value))
	}
	if c.SystemPrompt != "" {
		bw.WriteString(st.system)
		st.body(bw, c.SystemPrompt)
	}
	for _, m := range chat.Messages {
		fmt.Fprintf(bw, st.heading, st.escape(messageHeading(m, opt)))
		if m.Reasoning != "" && st.thinking != nil {
			st.thinking(bw, m)
		}
		st.body(bw, m.Content)
		if f := footerOf(m); !opt.NoMetadata && !f.empty() {
			fmt.Fprintf(bw, st.footer, st.escape(f.String()))
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("export: %s: %w", st.name, err)
	}
	return nil
}
