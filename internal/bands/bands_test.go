// Package bands holds the test that keeps the program's four bands apart
// (docs/ARCHITECTURE.md): front ends, services, the engine, its kernels.
package bands

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const module = "github.com/churon/churon/"

// rules: what the packages matching a pattern may not depend on, even
// indirectly (tests excluded: a test may build anything it needs).
var rules = []struct {
	pattern string
	why     string
	banned  []string
}{
	{"./ui/...", "the window reaches the engine only through the services' API",
		[]string{"engine", "app/session", "app/compare", "app/kvcache", "models/header", "cli", "serve"}},
	{"./serve/...", "the API server is a front end over the session's API: no engine behind it, no other front end",
		[]string{"engine", "app/session", "app/compare", "app/kvcache", "models/header", "ui", "cli", "desktop"}},
	{"./app/...", "services serve front ends, never the reverse",
		[]string{"ui", "cli", "desktop", "serve"}},
	{"./models/...", "model management sits below the services and front ends",
		[]string{"app", "ui", "cli", "desktop"}},
	{"./engine/...", "the engine knows nothing of what uses it",
		[]string{"app", "ui", "cli", "desktop", "models"}},
	{"./app/api/...", "the services' API is what front ends import: no engine behind it",
		[]string{"engine", "models/header"}},
	{"./app/models/...", "the Models page imports the model service itself: no engine behind it",
		[]string{"engine", "models/header"}},
	{"./app/remote/...", "the window adds and lists remote connections itself: no engine behind it",
		[]string{"engine", "models/header", "app/session", "app/compare"}},
}

func TestBands(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command to list packages with")
	}
	root := moduleRoot(t)
	for _, r := range rules {
		t.Run(r.pattern, func(t *testing.T) {
			cmd := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", r.pattern)
			cmd.Dir = root
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("go list %s: %v", r.pattern, err)
			}
			for _, dep := range strings.Fields(string(out)) {
				rel, ok := strings.CutPrefix(dep, module)
				if !ok {
					continue
				}
				for _, b := range r.banned {
					if rel == b || strings.HasPrefix(rel, b+"/") {
						t.Errorf("%s depends on %s: %s (go list -deps %s)", r.pattern, rel, r.why, r.pattern)
					}
				}
			}
		})
	}
}

func moduleRoot(t *testing.T) string {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Dir(strings.TrimSpace(string(out)))
}
