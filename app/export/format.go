package export

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// Format is an export format.
type Format string

const (
	Markdown Format = "md"
	HTML     Format = "html"
	JSON     Format = "json"
	Text     Format = "txt"
)

// Formats lists the formats in the order a chooser shows them.
var Formats = []Format{Markdown, HTML, JSON, Text}

// formatInfo is what the package knows of a format, in one place so that
// a new format is one entry: the names ParseFormat takes for it, its name
// for people, and how one chat is written in it.
type formatInfo struct {
	names []string
	title string
	write func(io.Writer, Chat, Options) error
}

var formats = map[Format]formatInfo{
	Markdown: {[]string{"md", "markdown"}, "Markdown", WriteMarkdown},
	HTML:     {[]string{"html", "htm"}, "HTML", WriteHTML},
	// One chat is a document that holds one conversation.
	JSON: {[]string{"json"}, "JSON", func(w io.Writer, chat Chat, opt Options) error { return WriteJSON(w, []Chat{chat}, opt) }},
	Text: {[]string{"txt", "text"}, "Plain text", WriteText},
}

// ParseFormat reads a format name: md (markdown), html (htm), json, txt
// (text), in any case.
func ParseFormat(s string) (Format, error) {
	name := strings.ToLower(strings.TrimPrefix(strings.TrimSpace(s), "."))
	for f, fi := range formats {
		if slices.Contains(fi.names, name) {
			return f, nil
		}
	}
	return "", fmt.Errorf("%w %q (want md, html, json or txt)", ErrFormat, s)
}

// Ext is the file name extension, with the dot.
func (f Format) Ext() string { return "." + string(f) }

// Name is the format's name for people.
func (f Format) Name() string {
	if fi, ok := formats[f]; ok {
		return fi.title
	}
	return string(f)
}

// Write writes one chat in format f. A JSON document written this way
// holds one conversation.
func Write(w io.Writer, f Format, chat Chat, opt Options) error {
	fi, ok := formats[f]
	if !ok {
		return fmt.Errorf("%w %q", ErrFormat, string(f))
	}
	return fi.write(w, chat, opt)
}
