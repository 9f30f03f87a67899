// Package markdown shows Markdown as Fyne widgets, and keeps showing it
// smoothly while it grows token by token.
//
// It parses with goldmark (CommonMark plus GitHub's tables, strikethrough,
// task lists and autolinks) and maps the syntax tree to Fyne objects:
// paragraphs, headings and list items become RichText, code blocks get a
// monospace face on a tinted panel with a copy button, tables become a grid
// of cells, block quotes get a bar at their left.
//
// A View keeps one object per top-level block. SetText re-parses the whole
// (message-sized) text but only rebuilds the blocks whose source changed,
// and updates the last one in place where it can, so a streaming answer
// costs about one block's worth of work per update, not the whole message.
//
//	v := markdown.NewView(markdown.Options{OnCopy: w.Clipboard().SetContent})
//	v.SetText("# Hello\n\nSome `code`.")
//
// Like every widget, a View is used from the Fyne goroutine only. Rect, the
// theme-coloured panel behind code and table cells, tints the window's
// own panels too.
package markdown
