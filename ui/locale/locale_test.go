package locale

import (
	"bytes"
	"encoding/json"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"log"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/lang"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/churon/churon/assets/translations"
)

func load(t *testing.T, code string) map[string]string {
	t.Helper()
	b, err := translations.FS.ReadFile(code + ".json")
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]string
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s.json: %v", code, err)
	}
	return m
}

// usedKeys finds every lang.X("key", "English") call in the ui packages.
func usedKeys(t *testing.T) map[string]string {
	t.Helper()
	keys := map[string]string{}
	root := ".."
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) < 2 {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || sel.Sel.Name != "X" {
				return true
			}
			if id, ok := sel.X.(*ast.Ident); !ok || id.Name != "lang" {
				return true
			}
			k, ok1 := call.Args[0].(*ast.BasicLit)
			v, ok2 := call.Args[1].(*ast.BasicLit)
			if !ok1 || !ok2 {
				t.Errorf("%s: lang.X with a non-literal key or fallback", p)
				return true
			}
			key, _ := strconv.Unquote(k.Value)
			val, _ := strconv.Unquote(v.Value)
			if old, dup := keys[key]; dup && old != val {
				t.Errorf("key %q has two English texts: %q and %q", key, old, val)
			}
			keys[key] = val
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) < 20 {
		t.Fatalf("found only %d lang.X calls under ui/: the walk is broken", len(keys))
	}
	return keys
}

func TestTranslationsComplete(t *testing.T) {
	used := usedKeys(t)
	en, ko := load(t, "en"), load(t, "ko")
	for k, v := range used {
		if en[k] != v {
			t.Errorf("en.json[%q] = %q, but the code's English is %q", k, en[k], v)
		}
		if strings.TrimSpace(ko[k]) == "" {
			t.Errorf("ko.json lacks %q", k)
		}
	}
	var stale []string
	for k := range en {
		if _, ok := used[k]; !ok {
			stale = append(stale, k)
		}
	}
	for k := range ko {
		if _, ok := en[k]; !ok {
			stale = append(stale, "ko:"+k)
		}
	}
	sort.Strings(stale)
	if len(stale) > 0 {
		t.Errorf("keys no code uses: %v", stale)
	}
	// Templates must name the same fields in both languages.
	for k, v := range en {
		if fields(v) != fields(ko[k]) {
			t.Errorf("%q: English uses %s, Korean %s", k, fields(v), fields(ko[k]))
		}
	}
}

func fields(s string) string {
	var out []string
	for {
		i := strings.Index(s, "{{.")
		if i < 0 {
			break
		}
		j := strings.Index(s[i:], "}}")
		if j < 0 {
			break
		}
		out = append(out, s[i:i+j+2])
		s = s[i+j+2:]
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

func TestSet(t *testing.T) {
	t.Setenv("LANG", "en_US.UTF-8")
	t.Setenv("LC_ALL", "")
	t.Setenv("LC_MESSAGES", "")
	t.Setenv("LANGUAGE", "")
	for _, c := range []struct{ code, want string }{
		{"ko", "새 대화"},
		{"en", "New chat"},
		{"ko", "새 대화"},
	} {
		got, err := Set(c.code)
		if err != nil || got != c.code {
			t.Fatalf("Set(%q) = %q, %v", c.code, got, err)
		}
		if s := lang.X("sidebar.new", "fallback"); s != c.want {
			t.Errorf("after Set(%q): %q, want %q", c.code, s, c.want)
		}
		if Current() != c.code {
			t.Errorf("Current() = %q after Set(%q)", Current(), c.code)
		}
	}
	if _, err := Set("xx"); err == nil {
		t.Error("Set(\"xx\") succeeded")
	}
	Set("en")
}

func TestSetUnderCLocale(t *testing.T) {
	// $LANGUAGE is ignored under LANG=C; Set must still switch.
	t.Setenv("LC_ALL", "C")
	t.Setenv("LANGUAGE", "")
	if _, err := Set("ko"); err != nil {
		t.Fatal(err)
	}
	if s := lang.X("composer.send", "fallback"); s != "보내기" {
		t.Errorf("under LC_ALL=C, Set(ko) shows %q", s)
	}
	Set("en")
}

// TestFyneDialogsKorean: with the Korean UI, Fyne's own file dialog and
// question dialogs find Korean for every word they ask for (no
// "Translation failure" logged), and English is back after switching back.
func TestFyneDialogsKorean(t *testing.T) {
	t.Setenv("LANGUAGE", "")
	var logged bytes.Buffer
	log.SetOutput(&logged)
	defer log.SetOutput(os.Stderr)
	if _, err := Set("ko"); err != nil {
		t.Fatal(err)
	}
	defer Set("en")
	test.NewTempApp(t)
	w := test.NewWindow(widget.NewLabel(""))
	defer w.Close()
	w.Resize(fyne.NewSize(900, 600))
	logged.Reset()
	open := dialog.NewFileOpen(func(fyne.URIReadCloser, error) {}, w)
	open.Resize(fyne.NewSize(820, 560))
	open.Show()
	folder := dialog.NewFolderOpen(func(fyne.ListableURI, error) {}, w)
	folder.Show()
	save := dialog.NewFileSave(func(fyne.URIWriteCloser, error) {}, w)
	save.Show()
	dialog.NewConfirm("?", "?", func(bool) {}, w).Show()
	dialog.NewError(errors.New("x"), w).Show()
	e := widget.NewEntry()
	w.SetContent(e)
	test.TapSecondary(e) // the entry's copy and paste menu
	if strings.Contains(logged.String(), "Translation failure") {
		t.Errorf("Fyne asked for words Korean lacks:\n%s", logged.String())
	}
	shown := w.Canvas().Overlays().List()
	var text strings.Builder
	for _, o := range shown {
		walkText(o, &text)
	}
	for _, want := range []string{"열기", "파일", "취소", "폴더", "저장", "파일 이름 입력", "예", "아니요", "오류", "복사", "붙여넣기"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("the dialogs do not say %q:\n%s", want, text.String())
		}
	}
	if _, err := Set("en"); err != nil {
		t.Fatal(err)
	}
	if got := lang.L("Open"); got != "Open" {
		t.Errorf("back in English, Fyne's Open is %q", got)
	}
}

// TestFyneTranslationsAgree: the Fyne strings have the same keys in every
// language.
func TestFyneTranslationsAgree(t *testing.T) {
	keys := func(code string) []string {
		b, err := translations.FS.ReadFile("fyne." + code + ".json")
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("fyne.%s.json: %v", code, err)
		}
		return slices.Sorted(maps.Keys(m))
	}
	if en, ko := keys("en"), keys("ko"); strings.Join(en, "|") != strings.Join(ko, "|") {
		t.Errorf("fyne.en.json has %v\nfyne.ko.json has %v", en, ko)
	}
}

// walkText writes the text of the labels, buttons, entries' place
// holders and menu items under o.
func walkText(o fyne.CanvasObject, b *strings.Builder) {
	switch o := o.(type) {
	case *widget.Label:
		b.WriteString(o.Text + "\n")
	case *widget.Button:
		b.WriteString(o.Text + "\n")
	case *widget.Check:
		b.WriteString(o.Text + "\n")
	case *widget.Entry:
		b.WriteString(o.PlaceHolder + "\n")
	case *canvas.Text:
		b.WriteString(o.Text + "\n")
	}
	switch o := o.(type) {
	case *fyne.Container:
		for _, c := range o.Objects {
			walkText(c, b)
		}
	case fyne.Widget:
		for _, c := range test.WidgetRenderer(o).Objects() {
			walkText(c, b)
		}
	}
}
