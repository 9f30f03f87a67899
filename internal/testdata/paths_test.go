package testdata

import (
	"path/filepath"
	"testing"
)

func TestPath(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(EnvVar, dir)
	cases := []struct {
		name string
		got  string
		want string
	}{
		{"folder", Path(t, "quantzoo"), filepath.Join(dir, "quantzoo")},
		{"file", Path(t, "quantzoo", "zoo-F32.gguf"), filepath.Join(dir, "quantzoo", "zoo-F32.gguf")},
		{"nothing", Path(t), dir},
		{"stories", Stories260K(t), filepath.Join(dir, "models", "stories260K.gguf")},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("%s: %q, want %q", c.name, c.got, c.want)
		}
	}
}
