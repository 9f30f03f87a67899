package export

import (
	"archive/zip"
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/url"
	"path"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// IndexFormatID is the "format" of the index.json in a zip of JSON
// exports: it lists the files, and Import skips it.
const IndexFormatID = "churon-chats-index"

// ZipEntry is a file of a zip export: its name in the archive and the
// chat it holds.
type ZipEntry struct {
	Name string
	Chat Chat
}

// ZipEntries names the files WriteZip writes for chats: "001-Title.md"…,
// numbered in order so that names are unique and sort as the chats do.
func ZipEntries(chats []Chat, f Format) []ZipEntry {
	width := len(fmt.Sprint(len(chats)))
	width = max(width, 3)
	out := make([]ZipEntry, len(chats))
	for i, ch := range chats {
		out[i] = ZipEntry{Name: fmt.Sprintf("%0*d-%s%s", width, i+1, safeName(title(ch.Conversation), 60), f.Ext()), Chat: ch}
	}
	return out
}

// IndexName is the index file's name in a zip of format f.
func IndexName(f Format) string { return "index" + f.Ext() }

// WriteZip writes chats as a zip archive: one file per chat in format f
// (for JSON, each file is a document of one conversation that Import
// takes on its own) and an index in the same format that lists them.
func WriteZip(w io.Writer, f Format, chats []Chat, opt Options) error {
	if _, err := ParseFormat(string(f)); err != nil {
		return err
	}
	zw := zip.NewWriter(w)
	entries := ZipEntries(chats, f)
	exported := opt.now()
	create := func(name string, mod time.Time) (io.Writer, error) {
		if mod.IsZero() {
			mod = exported
		}
		return zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Deflate, Modified: mod})
	}
	idx, err := create(IndexName(f), exported)
	if err != nil {
		return fmt.Errorf("export: zip: %w", err)
	}
	if err := writeIndex(idx, f, entries, opt); err != nil {
		return fmt.Errorf("export: zip: index: %w", err)
	}
	for _, e := range entries {
		fw, err := create(e.Name, e.Chat.Conversation.Updated)
		if err != nil {
			return fmt.Errorf("export: zip: %w", err)
		}
		if err := Write(fw, f, e.Chat, opt); err != nil {
			return fmt.Errorf("export: zip: %s: %w", e.Name, err)
		}
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("export: zip: %w", err)
	}
	return nil
}

// indexJSON is the shape of index.json.
type indexJSON struct {
	Format     string           `json:"format"`
	Version    int              `json:"version"`
	Generator  string           `json:"generator,omitempty"`
	ExportedAt time.Time        `json:"exported_at"`
	Files      []indexJSONEntry `json:"files"`
}

type indexJSONEntry struct {
	File     string    `json:"file"`
	ID       int64     `json:"id"`
	Title    string    `json:"title"`
	Created  time.Time `json:"created,omitzero"`
	Updated  time.Time `json:"updated,omitzero"`
	Messages int       `json:"messages"`
}

func writeIndex(w io.Writer, f Format, entries []ZipEntry, opt Options) error {
	exported := opt.now()
	switch f {
	case JSON:
		idx := indexJSON{Format: IndexFormatID, Version: Version, Generator: opt.Generator,
			ExportedAt: exported.UTC().Truncate(time.Millisecond), Files: make([]indexJSONEntry, 0, len(entries))}
		for _, e := range entries {
			c := e.Chat.Conversation
			idx.Files = append(idx.Files, indexJSONEntry{File: e.Name, ID: c.ID, Title: c.Title,
				Created: utc(c.Created), Updated: utc(c.Updated), Messages: len(e.Chat.Messages)})
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(idx)
	case HTML:
		return writeHTMLIndex(w, entries, opt)
	}
	bw := bufio.NewWriter(w)
	head := fmt.Sprintf("Churon chats (%d), exported %s", len(entries), exported.In(opt.loc()).Format(dateFmt))
	if f == Markdown {
		fmt.Fprintf(bw, "# %s\n\n", mdEscape(head))
	} else {
		fmt.Fprintf(bw, "%s\n%s\n\n", head, strings.Repeat("=", len([]rune(head))))
	}
	for i, e := range entries {
		c := e.Chat.Conversation
		info := fmt.Sprintf("%d messages, updated %s", len(e.Chat.Messages), showTime(c.Updated, opt))
		if f == Markdown {
			fmt.Fprintf(bw, "%d. [%s](%s) — %s\n", i+1, mdEscape(oneLine(title(c))), (&url.URL{Path: e.Name}).EscapedPath(), mdEscape(info))
		} else {
			fmt.Fprintf(bw, "%d. %s — %s\n   %s\n", i+1, oneLine(title(c)), info, e.Name)
		}
	}
	return bw.Flush()
}

func writeHTMLIndex(w io.Writer, entries []ZipEntry, opt Options) error {
	bw := bufio.NewWriter(w)
	head := fmt.Sprintf("Churon chats (%d)", len(entries))
	writeHTMLHead(bw, head, "")
	fmt.Fprintf(bw, "<header><h1>%s</h1><p class=\"meta\">Exported %s</p></header>\n<main>\n<table class=\"index\"><thead><tr><th>Chat</th><th>Messages</th><th>Updated</th></tr></thead><tbody>\n",
		html.EscapeString(head), html.EscapeString(opt.now().In(opt.loc()).Format(dateFmt)))
	for _, e := range entries {
		c := e.Chat.Conversation
		fmt.Fprintf(bw, "<tr><td><a href=\"%s\">%s</a></td><td>%d</td><td>%s</td></tr>\n",
			html.EscapeString((&url.URL{Path: e.Name}).EscapedPath()), html.EscapeString(oneLine(title(c))),
			len(e.Chat.Messages), html.EscapeString(showTime(c.Updated, opt)))
	}
	bw.WriteString("</tbody></table>\n</main>\n</body>\n</html>\n")
	return bw.Flush()
}

func isZip(data []byte) bool { return bytes.HasPrefix(data, []byte("PK\x03\x04")) }

// decodeZip reads the JSON exports in a zip (skipping its index).
func decodeZip(data []byte) ([]*Document, error) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, fmt.Errorf("%w: zip: %v", ErrMalformed, err)
	}
	// The files are read and decoded side by side, as many at once as
	// there are cores (a library of thousands of chats comes as tens of
	// files); the first error in the zip's order is the one told.
	var files []*zip.File
	for _, zf := range zr.File {
		if !zf.FileInfo().IsDir() && strings.EqualFold(path.Ext(zf.Name), ".json") {
			files = append(files, zf)
		}
	}
	parts := make([]*Document, len(files))
	errs := make([]error, len(files))
	var (
		wg   sync.WaitGroup
		next atomic.Int64
	)
	for range min(runtime.GOMAXPROCS(0), len(files)) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < len(files); i = int(next.Add(1) - 1) {
				parts[i], errs[i] = decodeZipFile(files[i])
			}
		})
	}
	wg.Wait()
	var docs []*Document
	for i, doc := range parts {
		if errs[i] != nil {
			return nil, errs[i]
		}
		if doc != nil {
			docs = append(docs, doc)
		}
	}
	if len(docs) == 0 {
		return nil, fmt.Errorf("%w: the zip holds no JSON export (export the chats as JSON to import them)", ErrMalformed)
	}
	return docs, nil
}

// decodeZipFile decodes one JSON file of a zip: nil for the zip's index.
func decodeZipFile(zf *zip.File) (*Document, error) {
	if zf.UncompressedSize64 > MaxImportSize {
		return nil, fmt.Errorf("%w: %s: larger than %d MiB", ErrMalformed, zf.Name, MaxImportSize>>20)
	}
	rc, err := zf.Open()
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrMalformed, zf.Name, err)
	}
	b, err := io.ReadAll(io.LimitReader(rc, MaxImportSize+1))
	rc.Close()
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrMalformed, zf.Name, err)
	}
	doc, err := decode(b)
	if err != nil {
		// Not an export: the index is skipped, anything else refused.
		var head struct {
			Format string `json:"format"`
		}
		if json.Unmarshal(b, &head) == nil && head.Format == IndexFormatID {
			return nil, nil
		}
		return nil, fmt.Errorf("%s: %w", zf.Name, err)
	}
	return doc, nil
}
