//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package kvcache

import "os"

// Without flock a live writer's temporary file cannot be told from a dead
// one's, so Open removes only those older than staleAfter.
const canLock = false

// renameOpen: Windows cannot rename a file that is open, so it is closed
// first.
const renameOpen = false

func lockFile(*os.File) error { return nil }

func inUse(string) bool { return false }

// lockWait is never called where canLock is false: there every Save
// writes the file whole.
func lockWait(*os.File) error { return nil }
