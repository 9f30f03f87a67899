package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/churon/churon/app/export"
	"github.com/churon/churon/app/paths"
	"github.com/churon/churon/app/store"
)

// fillHome stores two conversations in $CHURON_HOME's library and
// returns their ids.
func fillHome(t *testing.T) []int64 {
	t.Helper()
	ctx := context.Background()
	st, err := store.OpenDefault(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var ids []int64
	for i, c := range []struct{ title, q, a string }{
		{"Recipes", "How do I make stew?", "Simmer it.\n\n```go\nfmt.Println(\"<stew>\")\n```"},
		{"김치찌개", "김치찌개 만드는 법 <script>alert(1)</script>", "| 재료 | 양 |\n|---|---|\n| 김치 | 300 g |"},
	} {
		conv, err := st.CreateConversation(ctx, store.Conversation{Title: c.title, SystemPrompt: "Be brief.", Sampler: `{"temperature":0.7}`})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.AddMessage(ctx, store.Message{ConversationID: conv.ID, Role: store.RoleUser, Content: c.q}); err != nil {
			t.Fatal(err)
		}
		a, err := st.AppendAssistant(ctx, conv.ID, store.Message{Model: "tiny.gguf", Quant: "Q8_0", Sampler: `{"seed":7}`})
		if err != nil {
			t.Fatal(err)
		}
		a.Content, a.GenTokens, a.TTFT, a.GenTPS, a.FinishReason = c.a, 9, time.Duration(i+1)*time.Millisecond, 42.5, "eos"
		if err := st.FinishMessage(ctx, a); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, conv.ID)
		time.Sleep(2 * time.Millisecond)
	}
	return ids
}

func decodeDoc(t *testing.T, data []byte) export.Document {
	t.Helper()
	doc, err := export.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	for i := range doc.Conversations {
		doc.Conversations[i].ID = 0
		for j := range doc.Conversations[i].Messages {
			doc.Conversations[i].Messages[j].ID = 0
		}
	}
	doc.ExportedAt, doc.Generator = time.Time{}, ""
	slices.SortFunc(doc.Conversations, func(a, b export.Conversation) int { return a.Created.Compare(b.Created) })
	return *doc
}

// TestExportImportRoundTrip is the check through the CLI: JSON
// export → import into an empty $CHURON_HOME → export gives the same
// conversations and messages.
func TestExportImportRoundTrip(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(paths.EnvHome, filepath.Join(dir, "a"))
	fillHome(t)
	all := filepath.Join(dir, "all.json")
	if _, stderr, code := run(t, "export", "--all", "--format", "json", "-o", all); code != 0 {
		t.Fatalf("export: exit %d: %s", code, stderr)
	}
	first := readFile(t, all)

	t.Setenv(paths.EnvHome, filepath.Join(dir, "b")) // empty
	out, stderr, code := run(t, "import", all)
	if code != 0 || !strings.Contains(out, "imported 2, extended 0, skipped 0") {
		t.Fatalf("import: exit %d: %s%s", code, out, stderr)
	}
	second, stderr, code := run(t, "export", "--all", "--format", "json", "-o", "-")
	if code != 0 {
		t.Fatalf("second export: exit %d: %s", code, stderr)
	}
	// -o - with --all writes a zip to stdout; --all with -o X.json one document.
	if !strings.HasPrefix(second, "PK") {
		t.Fatalf("--all -o - did not write a zip")
	}
	docs := jsonDocsInZip(t, []byte(second))
	var merged export.Document
	for _, d := range docs {
		merged.Format, merged.Version = d.Format, d.Version
		merged.Conversations = append(merged.Conversations, d.Conversations...)
	}
	a, b := decodeDoc(t, first), decodeDoc(t, mustJSON(t, merged))
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("round trip differs:\n%s\n---\n%s", mustJSON(t, a), mustJSON(t, b))
	}

	// Importing again adds nothing.
	var res importJSON
	runJSON(t, &res, "import", "--json", all)
	if res.Skipped != 2 || res.Imported != 0 || len(res.Conversations) != 2 ||
		res.Conversations[0].Outcome != "skipped" {
		t.Errorf("second import: %+v", res)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func jsonDocsInZip(t *testing.T, data []byte) []export.Document {
	t.Helper()
	var docs []export.Document
	for _, f := range readZip(t, data).File {
		if f.Name == "index.json" {
			continue
		}
		rc, _ := f.Open()
		doc, err := export.Decode(rc)
		rc.Close()
		if err != nil {
			t.Fatalf("%s: %v", f.Name, err)
		}
		docs = append(docs, *doc)
	}
	return docs
}

func TestExportFormats(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(paths.EnvHome, filepath.Join(dir, "home"))
	ids := fillHome(t)
	id := func(i int) string { return strconv.FormatInt(ids[i], 10) }

	// Format from the file's extension; the file is written whole.
	html := filepath.Join(dir, "chat.html")
	if _, stderr, code := run(t, "export", "--conversation", id(1), "-o", html); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	page := readFile(t, html)
	if !bytes.Contains(page, []byte("&lt;script&gt;alert(1)&lt;/script&gt;")) || bytes.Contains(page, []byte("<script")) ||
		!bytes.Contains(page, []byte("<table>")) {
		t.Errorf("html export:\n%s", page)
	}
	if fi, err := os.Stat(html); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, %v", fi.Mode(), err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".chat.html.*")); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}

	for _, c := range []struct{ format, want string }{
		{"md", "## Assistant · tiny.gguf (Q8_0)"},
		{"txt", "-- Assistant · tiny.gguf (Q8_0)"},
		{"json", `"format": "churon-chats"`},
		{"markdown", "```go\nfmt.Println(\"<stew>\")\n```"},
	} {
		out, stderr, code := run(t, "export", "--conversation", id(0), "--format", c.format)
		if code != 0 || !strings.Contains(out, c.want) {
			t.Errorf("--format %s: exit %d, %s\n%s", c.format, code, stderr, out)
		}
	}
	out, _, _ := run(t, "export", "--conversation", id(0), "--format", "md", "--no-metadata")
	if strings.Contains(out, "tok/s") {
		t.Error("--no-metadata kept the statistics")
	}

	// --all: a zip with one file per conversation and an index.
	zipPath := filepath.Join(dir, "all.zip")
	if _, stderr, code := run(t, "export", "--all", "--format", "md", "-o", zipPath); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if names, want := zipNames(t, readFile(t, zipPath)), []string{"001-김치찌개.md", "002-Recipes.md", "index.md"}; !slices.Equal(names, want) {
		t.Errorf("zip holds %q, want %q", names, want)
	}
}

func TestExportImportErrors(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(paths.EnvHome, filepath.Join(dir, "home"))
	fillHome(t)
	wantUsageErrors(t, [][]string{
		{"export"},
		{"export", "--all", "--conversation", "1", "-o", "x.zip"},
		{"export", "--all", "--format", "md"},
		{"export", "--conversation", "1"},
		{"export", "--conversation", "1", "--format", "pdf"},
		{"export", "--conversation", "1", "-o", filepath.Join(dir, "x.pdf")},
		{"export", "--conversation", "1", "--format", "md", "extra"},
		{"import"},
		{"import", "a.json", "b.json"},
	})
	if _, stderr, code := run(t, "export", "--conversation", "999", "--format", "md"); code != 1 || !strings.Contains(stderr, "not found") {
		t.Errorf("unknown conversation: exit %d: %s", code, stderr)
	}
	for _, c := range []struct{ body, want string }{
		{`{"version": 9, "conversations": []}`, "newer Churon"},
		{`{"version": 1, "conversations": [{"messages": [{"role": "robot"}]}]}`, `unknown role "robot"`},
		{"not json", "not a valid Churon chat export"},
	} {
		path := filepath.Join(dir, "bad.json")
		os.WriteFile(path, []byte(c.body), 0o644)
		if _, stderr, code := run(t, "import", path); code != 1 || !strings.Contains(stderr, c.want) {
			t.Errorf("import %s: exit %d: %s", c.body, code, stderr)
		}
	}
	if _, stderr, code := run(t, "import", filepath.Join(dir, "missing.json")); code != 1 {
		t.Errorf("missing file: exit %d: %s", code, stderr)
	}

	// import - reads stdin.
	old := stdin
	defer func() { stdin = old }()
	stdin = strings.NewReader(`{"version": 1, "conversations": [{"title": "from stdin", "messages": [{"role": "user", "content": "hi"}]}]}`)
	out, stderr, code := run(t, "import", "-")
	if code != 0 || !strings.Contains(out, "imported") || !strings.Contains(out, "from stdin (1 messages added)") {
		t.Errorf("import -: exit %d: %s%s", code, out, stderr)
	}
}
