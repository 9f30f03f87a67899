package export

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/url"
	"strings"
	"testing"

	"github.com/churon/churon/app/store"
)

func readZip(t *testing.T, data []byte) map[string]string {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		if _, dup := files[f.Name]; dup {
			t.Errorf("%s twice in the zip", f.Name)
		}
		files[f.Name] = string(b)
	}
	return files
}

// TestZip checks --all's archive in every format: one file per
// conversation, named after it, plus an index that lists them all.
func TestZip(t *testing.T) {
	st := openStore(t)
	library(t, st)
	addChat(t, st, "Recipes", "same title twice", "still two files") // names must stay unique
	chats, err := LoadAll(context.Background(), st)
	if err != nil {
		t.Fatal(err)
	}
	if len(chats) != 4 {
		t.Fatalf("%d chats", len(chats))
	}
	for _, f := range Formats {
		var buf bytes.Buffer
		if err := WriteZip(&buf, f, chats, testOpt()); err != nil {
			t.Fatal(err)
		}
		files := readZip(t, buf.Bytes())
		if len(files) != len(chats)+1 {
			t.Errorf("%s: %d files, want %d chats and an index", f, len(files), len(chats))
		}
		index, ok := files[IndexName(f)]
		if !ok {
			t.Fatalf("%s: no %s", f, IndexName(f))
		}
		for i, e := range ZipEntries(chats, f) {
			body, ok := files[e.Name]
			if !ok {
				t.Errorf("%s: %s missing", f, e.Name)
				continue
			}
			if !strings.HasSuffix(e.Name, f.Ext()) {
				t.Errorf("%s: %s has the wrong extension", f, e.Name)
			}
			// Each file is that chat, as Write writes it alone.
			var one bytes.Buffer
			if err := Write(&one, f, chats[i], testOpt()); err != nil {
				t.Fatal(err)
			}
			if body != one.String() {
				t.Errorf("%s: %s is not the chat's own export", f, e.Name)
			}
			ref := e.Name
			if f == Markdown || f == HTML {
				ref = (&url.URL{Path: e.Name}).EscapedPath()
			}
			if !strings.Contains(index, ref) {
				t.Errorf("%s: the index does not link %s", f, ref)
			}
			if f == HTML {
				if problems, _ := inertReport(t, body); len(problems) > 0 {
					t.Errorf("%s: %v", e.Name, problems)
				}
			}
		}
		if f == HTML {
			if problems, _ := inertReport(t, index); len(problems) > 0 {
				t.Errorf("index.html: %v", problems)
			}
		}
		if f == JSON {
			var idx indexJSON
			if err := json.Unmarshal([]byte(index), &idx); err != nil || idx.Format != IndexFormatID || len(idx.Files) != len(chats) {
				t.Errorf("index.json: %+v %v", idx, err)
			}
			// The archive imports as a whole, the index skipped.
			other := openStore(t)
			res, err := Import(context.Background(), other, bytes.NewReader(buf.Bytes()))
			if err != nil || res.Count(store.Imported) != len(chats) {
				t.Errorf("import of the zip: %+v, %v", res, err)
			}
		}
	}
	names := ZipEntries(chats, Markdown)
	if !strings.HasPrefix(names[0].Name, "001-") || !strings.HasSuffix(names[0].Name, "김치찌개 레시피.md") {
		t.Errorf("first entry %q: want the pinned Korean chat, numbered", names[0].Name)
	}
}

func TestImportZipErrors(t *testing.T) {
	var buf bytes.Buffer
	chats := []Chat{{Conversation: store.Conversation{Title: "x"}}}
	if err := WriteZip(&buf, Markdown, chats, testOpt()); err != nil {
		t.Fatal(err)
	}
	st := openStore(t)
	if _, err := Import(context.Background(), st, bytes.NewReader(buf.Bytes())); !errors.Is(err, ErrMalformed) ||
		!strings.Contains(err.Error(), "no JSON export") {
		t.Errorf("zip of Markdown: %v", err)
	}
	// One bad file spoils the whole archive: nothing is imported.
	var zbuf bytes.Buffer
	zw := zip.NewWriter(&zbuf)
	for name, body := range map[string]string{
		"a.json": `{"version": 1, "conversations": [{"title": "good", "messages": []}]}`,
		"b.json": `{"version": 1, "conversations": [{"title": "bad", "messages": [{"role": "robot"}]}]}`,
	} {
		w, _ := zw.Create(name)
		w.Write([]byte(body))
	}
	zw.Close()
	if _, err := Import(context.Background(), st, bytes.NewReader(zbuf.Bytes())); !errors.Is(err, ErrMalformed) ||
		!strings.Contains(err.Error(), "b.json") {
		t.Errorf("zip with a bad file: %v", err)
	}
	if cs, _ := st.ListConversations(context.Background(), store.ListOptions{}); len(cs) != 0 {
		t.Errorf("a failed zip import left %d conversations", len(cs))
	}
	if err := WriteZip(io.Discard, Format("pdf"), chats, testOpt()); !errors.Is(err, ErrFormat) {
		t.Errorf("WriteZip(pdf): %v", err)
	}
}
