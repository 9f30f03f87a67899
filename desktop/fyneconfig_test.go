//go:build !ci

// With the ci tag Fyne's test driver keeps its files in the temporary
// folder, whatever the environment says; this checks the real driver's.

package desktop

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2/app"

	"github.com/churon/churon/app/paths"
)

const fyneChildEnv = "CHURON_TEST_FYNE_CHILD"

// TestFyneStaysUnderChuronHome: with $CHURON_HOME set, the app's storage
// (where Fyne's preferences.json lives) is under it, and a file written
// there lands nowhere else: not in the config folder nor the home folder
// Fyne would use otherwise. The app is made in a child process: Fyne
// watches its folders and makes them again when they are removed, until
// the process ends.
func TestFyneStaysUnderChuronHome(t *testing.T) {
	if os.Getenv(fyneChildEnv) != "" {
		fyneChild(t)
		return
	}
	home, outside := t.TempDir(), t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestFyneStaysUnderChuronHome$")
	cmd.Env = append(os.Environ(), fyneChildEnv+"=1", paths.EnvHome+"="+home,
		"XDG_CONFIG_HOME="+filepath.Join(outside, "config"), "HOME="+filepath.Join(outside, "home"), "USERPROFILE="+filepath.Join(outside, "home"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	said := map[string]string{}
	for _, l := range strings.Split(string(out), "\n") {
		if k, v, ok := strings.Cut(l, ": "); ok {
			said[k] = v
		}
	}
	for _, k := range []string{"storage", "probe"} {
		if !strings.HasPrefix(said[k], home+string(filepath.Separator)) {
			t.Fatalf("Fyne's %s is at %q; want it under CHURON_HOME %s\n%s", k, said[k], home, out)
		}
	}
	if _, err := os.Stat(said["probe"]); err != nil {
		t.Errorf("the file written through Fyne's storage is not there: %v", err)
	}
	filepath.WalkDir(outside, func(path string, d fs.DirEntry, err error) error {
		if err == nil && path != outside {
			t.Errorf("%s written outside CHURON_HOME", path)
		}
		return nil
	})
}

// fyneChild makes the app as Run does and writes a file through its
// storage, which writes at once (preferences are saved in the
// background).
func fyneChild(t *testing.T) {
	if err := keepFyneUnder(paths.ConfigDir()); err != nil {
		t.Fatal(err)
	}
	a := app.NewWithID("io.github.churon.ChuronTest")
	w, err := a.Storage().Create("probe")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	fmt.Printf("storage: %s\nprobe: %s\n", a.Storage().RootURI().Path(), w.URI().Path())
}
