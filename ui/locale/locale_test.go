package locale

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"fyne.io/fyne/v2/lang"

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
