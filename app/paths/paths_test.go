package paths

import (
	"path/filepath"
	"testing"

	"github.com/adrg/xdg"
)

func TestChuronHome(t *testing.T) {
	home := t.TempDir()
	t.Setenv(EnvHome, home)
	for _, c := range []struct{ got, want string }{
		{DataDir(), filepath.Join(home, "data")},
		{ConfigDir(), filepath.Join(home, "config")},
		{CacheDir(), filepath.Join(home, "cache")},
		{Database(), filepath.Join(home, "data", "churon.db")},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

func TestChuronHomeRelative(t *testing.T) {
	t.Setenv(EnvHome, "rel/home")
	if !filepath.IsAbs(DataDir()) {
		t.Errorf("DataDir %q is not absolute", DataDir())
	}
	if filepath.Base(filepath.Dir(DataDir())) != "home" {
		t.Errorf("DataDir %q is not under rel/home", DataDir())
	}
}

func TestXDG(t *testing.T) {
	t.Setenv(EnvHome, "")
	for _, c := range []struct{ got, want string }{
		{DataDir(), filepath.Join(xdg.DataHome, "churon")},
		{ConfigDir(), filepath.Join(xdg.ConfigHome, "churon")},
		{CacheDir(), filepath.Join(xdg.CacheHome, "churon")},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}
