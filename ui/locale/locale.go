// Package locale chooses the language of the desktop app's UI: English or
// Korean, from the system locale or from the person's choice in settings,
// through Fyne's lang package.
//
// Fyne picks translations by matching the system locale; it has no call to
// force a language. Set forces one in two ways that together work on every
// OS: it points $LANGUAGE at the choice (which Fyne reads on Linux and the
// BSDs, so Fyne's own dialogs follow too), and it registers the chosen
// strings under the system's language and English as well, so whichever
// tag Fyne's matcher settles on yields the chosen text.
package locale

import (
	"fmt"
	"os"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/lang"

	"github.com/churon/churon/assets/translations"
)

// A Language the UI is translated into.
type Language struct {
	Code string // "en", "ko"
	Name string // in its own language
}

// Supported lists the UI languages.
var Supported = []Language{{"en", "English"}, {"ko", "한국어"}}

var current = "en"

// Current is the language the UI is shown in.
func Current() string { return current }

// System is the supported language that the system locale asks for, or
// "en".
// It is read once, before Set changes the environment.
func System() string {
	if system == "" {
		system = detect()
	}
	return system
}

// system is the supported language System returns, systemLang the
// system's own language code ("de" on a German system), both read once.
var system, systemLang string

func detect() string {
	loc := string(lang.SystemLocale())
	systemLang = lang.SystemLocale().LanguageString()
	for _, l := range Supported {
		if strings.HasPrefix(loc, l.Code) {
			return l.Code
		}
	}
	return "en"
}

// Set loads the translations and shows the UI in code ("en", "ko"), or in
// the system's language when code is "". It returns the language chosen.
// Widgets made before the call keep their text: the caller rebuilds them.
func Set(code string) (string, error) {
	sys := System()
	if code == "" {
		code = sys
	}
	data, err := translations.FS.ReadFile(code + ".json")
	if err != nil {
		return current, fmt.Errorf("locale: no translation for %q: %w", code, err)
	}
	// Fyne has no Korean of its own: without these its file dialog logs
	// a translation failure for every word and shows English. English is
	// registered again too, over the Korean left under "en" before.
	fyneData, err := translations.FS.ReadFile("fyne." + code + ".json")
	if err != nil {
		fyneData = nil // Fyne's own strings stay
	}
	setEnv(code)
	tags := []string{code, "en"}
	for _, t := range []string{sys, systemLang} {
		if t != "" && t != code && t != "en" {
			tags = append(tags, t)
		}
	}
	for _, t := range tags {
		if err := lang.AddTranslationsForLocale(data, fyne.Locale(t)); err != nil {
			return current, fmt.Errorf("locale: load %s.json: %w", code, err)
		}
		if fyneData != nil {
			if err := lang.AddTranslationsForLocale(fyneData, fyne.Locale(t)); err != nil {
				return current, fmt.Errorf("locale: load fyne.%s.json: %w", code, err)
			}
		}
	}
	current = code
	return code, nil
}

// setEnv makes $LANGUAGE name the choice. $LANGUAGE is ignored while the
// locale is "C" or "POSIX", so such a value is replaced by C.UTF-8, which
// means the same to programs but lets $LANGUAGE count.
func setEnv(code string) {
	os.Setenv("LANGUAGE", code)
	for _, v := range []string{"LC_ALL", "LC_MESSAGES", "LANG"} {
		val := os.Getenv(v)
		if val == "" {
			continue
		}
		if val == "C" || val == "POSIX" {
			os.Setenv(v, "C.UTF-8")
		}
		return
	}
}
