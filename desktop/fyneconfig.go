package desktop

import (
	"fmt"
	"os"
	"runtime"
)

// keepFyneUnder makes Fyne keep its own files (its settings.json, the
// app's preferences.json and its storage) under dir instead of the
// person's config folder, for $CHURON_HOME, under which every file of
// Churon's must stay. Fyne has no option for it: it takes the folder from
// os.UserConfigDir (XDG_CONFIG_HOME) on Linux and the BSDs, and from the
// home folder on macOS (HOME) and Windows (USERPROFILE); so that variable
// is pointed at dir for this process, before the app is made.
func keepFyneUnder(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("desktop: Fyne's settings folder: %w", err)
	}
	key := "XDG_CONFIG_HOME"
	switch runtime.GOOS {
	case "darwin":
		key = "HOME"
	case "windows":
		key = "USERPROFILE"
	}
	if err := os.Setenv(key, dir); err != nil {
		return fmt.Errorf("desktop: Fyne's settings folder: %w", err)
	}
	return nil
}
