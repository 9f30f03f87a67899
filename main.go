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
	// Fyne's OpenGL driver locks main.main to the process's first thread
	// (in an init: GLFW must run there), which only the desktop app needs.
	// A goroutine locked to its thread cannot yield it: each time the CPU
	// device's thread pool, waiting for a loop's last jobs, calls
	// runtime.Gosched there, the runtime hands the thread's P to another
	// thread and parks this one (a futex wait and wake each time, tens of
	// thousands a second). So the headless commands run on a goroutine of
	// their own: `churon bench -t 2` made 40,000–51,000 context switches a
	// run before and 1,150–1,350 after, and decodes a 0.5B Q4_0 file at
	// 137–145 tokens/s instead of 118–134 (docs/performance.md, 2026-12-07).
	code := make(chan int)
	go func() { code <- cli.Main(os.Args[1:]) }()
	c := <-code
	if c < 0 { // no arguments: the desktop app, on the locked thread
		c = desktop.Run()
	}
	os.Exit(c)
}
