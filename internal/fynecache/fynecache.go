// Package fynecache gives Fyne's caches a lifetime of 12 s instead of
// Fyne's one minute, unless FYNE_CACHE already says otherwise.
//
// Why: Fyne's GL painter keeps one texture per distinct text line it has
// painted (keyed by string, size, style and colour) and frees it only
// cache.ValidDuration after that line was last painted. Scrolling a long
// chat paints thousands of distinct lines, so a minute of them held
// about 1.1 GB under Xvfb's software OpenGL for a 2,000-message chat
// (issue 25). Fyne reads the lifetime from FYNE_CACHE once, in the init
// of its internal/cache package, so setting it from main is too late and
// there is no API for it.
//
// How: this package sets FYNE_CACHE in its own init, which runs before
// Fyne's: it imports only os, so Go's initialization order (dependencies
// first, then import path order among the ready) runs it long before
// fyne.io/fyne/v2/internal/cache, which waits on most of Fyne.
// TestFyneCacheBeforeFyne (main_test.go) checks that order on the real
// binary's package graph. This works the same for every way the app is
// started — a double-click, the .desktop entry, a terminal, `go run` —
// on every OS, with no re-exec (which Windows lacks) and no launcher
// script to keep in step (which `go run` and a bare binary skip).
//
// Why 12 s and not less: Fyne's loop walks the whole window on every
// idle frame (60 a second) to keep its caches alive once the last walk
// is older than ValidDuration − 10 s (internal/driver/glfw/loop.go); at
// 10 s or less that is every frame, which costs idle CPU. At 12 s an idle
// window is walked every 2 s. The cost of the shorter lifetime is that a
// widget hidden for 12 s (another page, a closed dialog) has its renderer
// rebuilt when it shows again, which Fyne does anyway after a minute.
//
// A FYNE_CACHE set by the person (any non-empty value) is left alone.
// Processes Churon starts inherit the value.
package fynecache

import "os"

// Env is the variable Fyne reads its cache lifetime from.
const Env = "FYNE_CACHE"

// Lifetime is the lifetime set when Env is unset or empty.
const Lifetime = "12s"

func init() { Apply(os.Getenv, os.Setenv) }

// Apply sets Env to Lifetime through set when get says it is empty,
// and keeps what is there otherwise. It is exported for the test.
func Apply(get func(string) string, set func(string, string) error) {
	if get(Env) == "" {
		_ = set(Env, Lifetime) // fails only for an invalid name
	}
}
