// Command churon is the Churon desktop app and its headless commands.
package main

import (
	"os"

	"github.com/churon/churon/cli"
	"github.com/churon/churon/desktop"
	_ "github.com/churon/churon/engine/backend/cuda"  // registers the CUDA backend (Linux, Windows)
	_ "github.com/churon/churon/engine/backend/metal" // registers the Metal backend (macOS)
	_ "github.com/churon/churon/internal/clocale"     // before Fyne reads the locale; see the package
	_ "github.com/churon/churon/internal/fynecache"   // before Fyne reads FYNE_CACHE; see the package
)

func main() {
	code := cli.Main(os.Args[1:])
	if code < 0 { // no arguments: the desktop app
		code = desktop.Run()
	}
	os.Exit(code)
}
