// Command churon is the Churon desktop app and its headless commands.
package main

import (
	"os"

	"github.com/churon/churon/app/cli"
)

func main() {
	code := cli.Main(os.Args[1:])
	if code < 0 {
		// The desktop app arrives with the GUI issue; until then, say so.
		os.Stderr.WriteString("churon: the desktop app is not built yet; run 'churon --help' for the headless commands.\n")
		code = 2
	}
	os.Exit(code)
}
