package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestNoLocaleNoise starts this test binary — which links Fyne like the
// app does — under LANG=C.UTF-8 and checks that Fyne's locale reader no
// longer logs an error: internal/clocale must initialize before
// fyne.io/fyne/v2/lang for that.
func TestNoLocaleNoise(t *testing.T) {
	if os.Getenv("CHURON_LOCALE_CHILD") == "1" {
		return // package init has run; that is all the parent wants
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestNoLocaleNoise$")
	var env []string
	for _, kv := range os.Environ() {
		switch k, _, _ := strings.Cut(kv, "="); k {
		case "LANG", "LC_ALL", "LC_MESSAGES", "LANGUAGE":
		default:
			env = append(env, kv)
		}
	}
	cmd.Env = append(env, "CHURON_LOCALE_CHILD=1", "LANG=C.UTF-8")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	if strings.Contains(string(out), "locale") {
		t.Errorf("start-up under LANG=C.UTF-8 logged:\n%s", out)
	}
}
