// Package ui is Churon's desktop window, built with Fyne.
//
// It holds no business logic: every action is a command to the session
// manager (app/session) — or, on the Compare page, to app/compare — and
// what happens comes back as events that a small bridge (bridge.go)
// applies to the widgets on Fyne's goroutine.
// Each screen is one struct with its widgets and named onX handlers:
//
//	sidebar.go   conversations, search, new chat, rename, pin, delete/undo
//	chat.go      the messages of one conversation, streaming
//	message.go   one message: Markdown body, footer, copy/edit/regenerate
//	composer.go  the input box with Send/Stop
//	model.go     model picker: open a GGUF file, recent files, load, unload
//	settings.go  per-conversation settings with presets; app language
//	welcome.go   first run: what to do, GGUF files found on disk
//	status.go    model, quantization, backend, memory, where the chat's KV cache is
//	models*.go   the Models page: catalog, hub search, downloads, library
//	compare_*.go the Compare page: models side by side, figures, KLD chart,
//	             tokens that part from the reference marked, quantize, export
//
// New builds the window's content on an existing fyne.App and Window, so
// tests drive it with fyne.io/fyne/v2/test; package ui/desktop opens the
// real window. Nothing here imports fyne.io/fyne/v2/app.
package ui
