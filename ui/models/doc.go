// Package models is the Models page of Churon's window and what it
// keeps: the curated catalog with a fit verdict for this computer
// (catalog.go, verdict.go), a search of Hugging Face with each
// repository's quantizations (search.go) and its access token (token.go),
// the download queue (downloads.go) and the models on this computer
// (library.go); the welcome view's recommended model (welcome.go).
//
// State (state.go) outlives the page when the window is rebuilt: the
// catalog, the hub client, the library and the download manager, which
// the Compare page and the model menu borrow. The shell (package ui)
// makes one on a core.Window and shows its Page in the window's centre.
package models
