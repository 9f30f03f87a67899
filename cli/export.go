package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/churon/churon/app/export"
	"github.com/churon/churon/app/store"
	"github.com/churon/churon/internal/atomicfile"
)

func init() {
	register("export", "export chats as Markdown, HTML, JSON or text (--all: a zip)", runExport)
	register("import", "import chats from a JSON export (or a zip of them)", runImport)
}

func runExport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagsWithHelp("export", stderr, "Usage:\n  churon export --conversation ID [--format md|html|json|txt] [-o PATH|-]\n  churon export --all --format md|html|json|txt -o PATH.zip|-\n  churon export --all --format json -o PATH.json      (one JSON document with every chat)",
		"The JSON format is documented in docs/export-format.md and is what `churon import` reads.\nConversation ids are in `churon chat` and in the desktop app's chat menu.")
	conv := fs.Int64("conversation", 0, "export the conversation with this `id`")
	all := fs.Bool("all", false, "export every conversation (not the trash) as a zip: one file per chat and an index")
	format := fs.String("format", "", "`md|html|json|txt`; default: from the -o file's extension")
	out := fs.String("o", "", "write to this `path` (- for stdout; default stdout for one conversation)")
	noMeta := fs.Bool("no-metadata", false, "leave out the statistics and sampler line under each answer (md, html, txt)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	given := givenFlags(fs)
	switch {
	case len(pos) > 0:
		return usagef("unexpected argument %q", pos[0])
	case *all == given["conversation"]:
		return usagef("give --conversation ID or --all")
	case *all && *out == "":
		return usagef("--all writes a zip: give -o FILE.zip (or -o - for stdout)")
	}
	if *out == "" {
		*out = "-"
	}
	if *format == "" && *out != "-" && !*all {
		*format = filepath.Ext(*out)
	}
	if *format == "" {
		return usagef("give --format md, html, json or txt")
	}
	f, err := export.ParseFormat(*format)
	if err != nil {
		return usagef("%v", err)
	}

	st, err := store.OpenDefault(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	opt := export.Options{NoMetadata: *noMeta, Generator: "churon " + Version}
	write := func(w io.Writer) error {
		if *all {
			chats, err := export.LoadAll(ctx, st)
			if err != nil {
				return err
			}
			if f == export.JSON && strings.EqualFold(filepath.Ext(*out), ".json") {
				// One document with every conversation: the simplest backup.
				err = export.WriteJSON(w, chats, opt)
			} else {
				err = export.WriteZip(w, f, chats, opt)
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(stderr, "exported %d conversations\n", len(chats))
			return nil
		}
		chat, err := export.Load(ctx, st, *conv)
		if err != nil {
			return err
		}
		if chat.Conversation.Deleted() {
			fmt.Fprintf(stderr, "note: conversation %d is in the trash\n", *conv)
		}
		return export.Write(w, f, chat, opt)
	}
	if *out == "-" {
		bw := bufio.NewWriter(stdout)
		if err := write(bw); err != nil {
			return err
		}
		return bw.Flush()
	}
	// An export that fails half-way leaves no half-written file, nor
	// clobbers an older export of the same name.
	return atomicfile.Write(*out, 0o644, write)
}

// importJSON is the documented shape of `churon import --json`.
type importJSON struct {
	Imported      int                      `json:"imported"`
	Extended      int                      `json:"extended"`
	Skipped       int                      `json:"skipped"`
	Conversations []importJSONConversation `json:"conversations"`
}

type importJSONConversation struct {
	ID       int64  `json:"id"`
	Title    string `json:"title"`
	Outcome  string `json:"outcome"` // imported, extended or skipped
	Messages int    `json:"messages"`
}

func runImport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagsWithHelp("import", stderr, "Usage:\n  churon import [--json] FILE.json|FILE.zip|-",
		"Adds the conversations of a JSON export (docs/export-format.md), or of a zip of them made\nby `churon export --all --format json`, to the chat library, all or nothing. A conversation\nalready in the library is skipped; one that went on since is brought up to date.")
	asJSON := fs.Bool("json", false, "print the result as one JSON object")
	pos, err := parseN(fs, args, 1, "give one file to import (- for stdin)")
	if err != nil {
		return err
	}
	var r io.Reader
	if pos[0] == "-" {
		r = stdin
	} else {
		f, err := os.Open(pos[0])
		if err != nil {
			return err
		}
		defer f.Close()
		r = f
	}
	st, err := store.OpenDefault(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	start := time.Now()
	res, err := export.Import(ctx, st, r)
	if err != nil {
		return err
	}
	out := importJSON{Imported: res.Count(store.Imported), Extended: res.Count(store.Extended), Skipped: res.Count(store.Skipped),
		Conversations: make([]importJSONConversation, 0, len(res.Conversations))}
	for _, c := range res.Conversations {
		out.Conversations = append(out.Conversations, importJSONConversation{ID: c.ID, Title: c.Title, Outcome: c.Outcome.String(), Messages: c.Messages})
	}
	if *asJSON {
		return writeJSON(stdout, out)
	}
	for _, c := range out.Conversations {
		title := c.Title
		if strings.TrimSpace(title) == "" {
			title = "(untitled)"
		}
		fmt.Fprintf(stdout, "%-8s %5d  %s (%d messages added)\n", c.Outcome, c.ID, title, c.Messages)
	}
	fmt.Fprintf(stdout, "imported %d, extended %d, skipped %d (already in the library) in %s\n",
		out.Imported, out.Extended, out.Skipped, time.Since(start).Round(time.Millisecond))
	return nil
}
