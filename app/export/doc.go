// Package export writes conversations of the chat library out as
// Markdown, HTML, JSON or plain text, one chat or many (a .zip with one
// file per chat and an index), and reads the JSON format back into the
// library.
//
// Every writer takes an io.Writer and Chats loaded from the store, so the
// desktop app (a save dialog), the CLI (a file or stdout) and tests use the
// same code. The package imports no UI toolkit.
//
//	chat, err := export.Load(ctx, st, id)
//	err = export.Write(w, export.HTML, chat, export.Options{})
//	res, err := export.Import(ctx, st, r) // JSON, or a .zip of JSON files
//
// # Formats
//
//   - Markdown keeps each answer exactly as the model wrote it (its own
//     Markdown, code fences intact) under a heading naming who wrote it,
//     after a header with the title, dates, model and system prompt. A
//     line under each answer gives its statistics and sampler settings
//     unless Options.NoMetadata is set.
//   - HTML is one self-contained page: inline CSS, light and dark colour
//     schemes (prefers-color-scheme), print styles, Markdown rendered by
//     goldmark with GitHub's extensions, code coloured by a small
//     highlighter written here (highlight.go says why not Chroma). It runs
//     no script and loads nothing: see Safety.
//   - JSON is lossless and versioned (docs/export-format.md is the
//     schema); Import reads it back.
//   - Plain text is for pasting anywhere.
//
// # Safety
//
// Model output is untrusted: an answer may contain <script> or an
// <img onerror=…> on purpose or by accident, and an export must show it,
// not run it. The HTML writer never passes raw HTML through: goldmark's
// raw-HTML nodes are written as escaped text (so the reader sees the
// markup literally), links are kept only for http, https and mailto and
// relative targets, images become links (an image would be a network
// request), and every other string is escaped. On top of that the page
// carries a Content-Security-Policy that forbids scripts and every
// network fetch, so a mistake here would still run nothing.
//
// # Import
//
// Import parses and validates the whole file before it writes anything,
// so a malformed or newer-version file changes nothing; then it writes
// through store.Import, each conversation whole, in batches. A conversation already in the
// library is recognised and not duplicated; see store.Import.
package export
