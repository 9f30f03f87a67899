// Package uitest is what the window's tests share: a harness that runs
// the window over a real session manager and database in Fyne's headless
// test app (harness.go), ways to find widgets in it (find.go), pictures
// (pictures.go), and the Models page's set-up: folders, synthetic models,
// the fake hub of models/hub/hubtest (library.go).
//
// It imports neither package ui nor a screen, so that every package's
// own tests can use it. A screen's tests open the whole window through
// NewWindow, which package uitest/uiwin makes possible: a screen package
// imports it from an external test file (package chat_test…), since
// package ui imports the screen.
package uitest
