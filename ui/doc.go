// Package ui is Churon's desktop window, built with Fyne.
//
// It holds no business logic: every action is a command to a service —
// the session (app/api/session.Service), the comparisons
// (app/api/compare.Service), the model library and downloads
// (app/models) — and what happens comes back as events that the window
// applies to the widgets on Fyne's goroutine (bridge.go for the session's).
// Commands that may wait on the disk run on the window's command workers
// (core.Commands), never on Fyne's goroutine. No package under ui/
// imports the engine (internal/bands keeps it so).
//
// This package is the window's shell: New builds the screens on a shared
// core and wires them, keeps the state they share, and owns the parts
// that are the window's own. Each screen is one struct with its widgets
// and named onX handlers:
//
//	ui.go        New, Options, UI: the layout, the session's events, send/stop,
//	             opening chats, shortcuts, fonts and language
//	bridge.go    the session's events onto Fyne's goroutine, tokens merged
//	sidebar.go   conversations, search, new chat, rename, pin, delete/undo
//	sidebar_pages.go  the sidebar's rows read a page at a time as it scrolls
//	model.go     model picker: open a GGUF file, recent files, load, unload
//	welcome.go   first run: what to do, GGUF files found on disk
//	status.go    model, quantization, backend, memory, where the chat's KV cache is
//	export.go    export and import: the chat menus, dropped files
//	screens.go   the screens as they are now, for their packages' tests
//
// The screens, each its own package over ui/core (they import no other
// screen, nor this package):
//
//	ui/core      what every screen shares: core.Window (Fyne's goroutine,
//	             the session, banners and errors, settings, the shared
//	             state, the shell's hooks), theme, entry, layout, file
//	             dialogs, formatting, the command queue
//	ui/chat      the conversation: messages streaming as Markdown, their
//	             footers and actions, the message box with Send/Stop
//	ui/models    the Models page: catalog, hub search, access token,
//	             downloads, library; the welcome view's recommendation
//	ui/compare   the Compare page: models side by side, figures, KLD chart,
//	             tokens that part from the reference marked, quantize,
//	             past comparisons, export
//	ui/settings  the settings dialog: this chat's sampler with presets,
//	             the app's language and caches
//
// and beside them ui/markdown (the renderer) and ui/locale (the
// languages); the tests' harness is internal/uitest.
//
// New builds the window's content on an existing fyne.App and Window, so
// tests drive it with fyne.io/fyne/v2/test; package desktop opens the
// real window. Nothing here imports fyne.io/fyne/v2/app.
package ui
