package clocale

import "testing"

func TestApply(t *testing.T) {
	for _, c := range []struct {
		name string
		env  map[string]string
		want string // LANGUAGE afterwards
	}{
		{"C.UTF-8", map[string]string{"LANG": "C.UTF-8"}, "en"},
		{"POSIX.utf8 in LC_ALL", map[string]string{"LC_ALL": "POSIX.utf8", "LANG": "ko_KR.UTF-8"}, "en"},
		{"plain C is understood already", map[string]string{"LANG": "C"}, ""},
		{"a real locale", map[string]string{"LANG": "ko_KR.UTF-8"}, ""},
		{"LC_MESSAGES decides before LANG", map[string]string{"LC_MESSAGES": "ko_KR.UTF-8", "LANG": "C.UTF-8"}, ""},
		{"LANGUAGE already chosen", map[string]string{"LANG": "C.UTF-8", "LANGUAGE": "ko"}, "ko"},
		{"nothing set", map[string]string{}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			env := map[string]string{}
			for k, v := range c.env {
				env[k] = v
			}
			Apply(func(k string) string { return env[k] }, func(k, v string) error { env[k] = v; return nil })
			if got := env["LANGUAGE"]; got != c.want {
				t.Errorf("LANGUAGE = %q, want %q", got, c.want)
			}
		})
	}
}
