// Package clocale keeps a C locale from making Fyne log an error at start.
//
// Containers, CI machines and minimal installs often run with
// LANG=C.UTF-8. Fyne's lang package reads the locale in its package
// init, takes "C" for a language tag, fails to parse it and logs "Fyne
// error: Error parsing user locale C" on every start, headless commands
// included. The C locale means "no language preference", so this package
// says so in the way Fyne's locale reader understands: it sets LANGUAGE
// to English when the locale is C or POSIX with an encoding and LANGUAGE
// is unset (GNU gettext ignores LANGUAGE under a C locale, so programs
// Churon starts see no difference).
//
// It must initialize before fyne.io/fyne/v2/lang: it imports only os and
// strings, so Go's initialization order (dependencies first, then import
// path order among the ready) runs it as soon as os is ready, before
// Fyne's lang, which waits on far more packages. main imports it first
// and main's TestNoLocaleNoise (a child started under LANG=C.UTF-8
// must log nothing about the locale) checks the order holds.
package clocale

import (
	"os"
	"strings"
)

func init() { Apply(os.Getenv, os.Setenv) }

// Apply sets LANGUAGE=en through set when the effective locale read
// through get is C or POSIX with an encoding (C.UTF-8) and LANGUAGE is
// empty. It is exported for the test.
func Apply(get func(string) string, set func(string, string) error) {
	loc := ""
	for _, env := range []string{"LC_ALL", "LC_MESSAGES", "LANG"} {
		if loc = get(env); loc != "" {
			break
		}
	}
	base, _, hasEnc := strings.Cut(loc, ".")
	if hasEnc && (base == "C" || base == "POSIX") && get("LANGUAGE") == "" {
		set("LANGUAGE", "en")
	}
}
