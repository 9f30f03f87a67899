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

// TestFyneCacheBeforeFyne: internal/fynecache must set FYNE_CACHE before
// Fyne's internal/cache reads it in its init. The child's runtime traces
// each package's init in the order they run (GODEBUG=inittrace=1); this
// binary links what the app links.
func TestFyneCacheBeforeFyne(t *testing.T) {
	if os.Getenv("CHURON_INITORDER_CHILD") == "1" {
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestFyneCacheBeforeFyne$")
	cmd.Env = append(os.Environ(), "CHURON_INITORDER_CHILD=1", "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	order := map[string]int{}
	for i, l := range strings.Split(string(out), "\n") {
		if f := strings.Fields(l); len(f) > 1 && f[0] == "init" {
			order[f[1]] = i
		}
	}
	ours, ok1 := order["github.com/churon/churon/internal/fynecache"]
	fyne, ok2 := order["fyne.io/fyne/v2/internal/cache"]
	if !ok1 || !ok2 {
		t.Fatalf("the init trace lacks a package (ours %v, Fyne's cache %v):\n%s", ok1, ok2, out)
	}
	if ours > fyne {
		t.Errorf("internal/fynecache initializes after Fyne's cache has read FYNE_CACHE")
	}
}
