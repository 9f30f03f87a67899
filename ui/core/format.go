package core

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"fyne.io/fyne/v2/lang"

	"github.com/churon/churon/app/api/session"
	"github.com/churon/churon/internal/units"
	"github.com/churon/churon/models/discover"
)

// FormatBytes is units.Bytes under the name the views use.
var FormatBytes = units.Bytes

// FormatDuration writes a short time: milliseconds under a second.
func FormatDuration(d time.Duration) string {
	if d < time.Second {
		return fmt.Sprintf("%d ms", d.Milliseconds())
	}
	return fmt.Sprintf("%.2f s", d.Seconds())
}

// FormatParams is units.Params under the name the views use.
var FormatParams = units.Params

// ModelLabel is a short name for a model file.
func ModelLabel(path string) string {
	if conn, model, ok := session.ParseRemote(path); ok {
		return lang.X("model.remote", "{{.Model}} — {{.Conn}} (remote)", map[string]any{"Model": model, "Conn": conn})
	}
	if session.IsDemo(path) {
		return lang.X("model.demo", "Demo: stories260K (built in)")
	}
	if name, ok := discover.OllamaName(path); ok {
		return name // its file is named by a hash
	}
	b := filepath.Base(path)
	return strings.TrimSuffix(b, filepath.Ext(b))
}

// ShortDir is the folder of p with the home folder written as ~.
func ShortDir(p string) string {
	d := filepath.Dir(p)
	if home, err := os.UserHomeDir(); err == nil && home != "" {
		if rel, err := filepath.Rel(home, d); err == nil && !strings.HasPrefix(rel, "..") {
			return filepath.Join("~", rel)
		}
	}
	return d
}

// FileExists reports whether p is a regular file.
func FileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// AllPresent reports whether every file (a model's parts) is in place.
func AllPresent(files []string) bool {
	for _, f := range files {
		if !FileExists(f) {
			return false
		}
	}
	return true
}

// Known keeps the parts of a row's details that say something: not empty,
// not "?" (a figure no one knows).
func Known(parts ...string) []string {
	var out []string
	for _, s := range parts {
		if s != "" && s != "?" {
			out = append(out, s)
		}
	}
	return out
}
