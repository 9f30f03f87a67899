// Package core is what every screen of Churon's window shares: Window,
// the way a screen reaches the window (Fyne's goroutine, the session
// manager, the banners and errors, the settings, the state the screens
// share and the shell's hooks, window.go and banner.go), Commands, which
// runs the window's commands off Fyne's goroutine in order, and the
// widgets and helpers more than one screen uses — the theme and muted
// text (theme.go), the entry that passes the app's shortcuts on
// (entry.go), the reading column and row lines (layout.go), file and
// confirm dialogs (dialog.go), the library's listing (library.go), the
// hub's errors (hub.go), the pacing of streamed text (throttle.go), and
// the wording of sizes, durations and the like (format.go).
//
// The shell (package ui) makes one Window per window and hands it to the
// screens (ui/chat, ui/models, ui/compare, ui/settings); they import this
// package and never the shell or each other.
package core
