package fynecache

import (
	"testing"
	"time"
)

func TestApply(t *testing.T) {
	for _, c := range []struct {
		name string
		env  map[string]string
		want string
	}{
		{"unset: the app's lifetime", map[string]string{}, Lifetime},
		{"empty: the app's lifetime", map[string]string{Env: ""}, Lifetime},
		{"explicit value kept", map[string]string{Env: "3s"}, "3s"},
		{"explicit Fyne default kept", map[string]string{Env: "1m"}, "1m"},
		{"value Fyne cannot parse kept", map[string]string{Env: "soon"}, "soon"},
	} {
		t.Run(c.name, func(t *testing.T) {
			env := map[string]string{}
			for k, v := range c.env {
				env[k] = v
			}
			Apply(func(k string) string { return env[k] }, func(k, v string) error { env[k] = v; return nil })
			if got := env[Env]; got != c.want {
				t.Errorf("%s = %q, want %q", Env, got, c.want)
			}
		})
	}
}

// TestLifetimeAboveIdleWalk: Fyne walks an idle window every frame when
// its cache lifetime is 10 s or less (see the package comment).
func TestLifetimeAboveIdleWalk(t *testing.T) {
	d, err := time.ParseDuration(Lifetime)
	if err != nil {
		t.Fatalf("Fyne could not parse %q: %v", Lifetime, err)
	}
	if d <= 10*time.Second {
		t.Errorf("Lifetime %s: Fyne would walk an idle window on every frame", d)
	}
}
