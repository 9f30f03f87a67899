//go:build !ci

package main

// realWindow: this build opens real windows (cgo, OpenGL); with Fyne's
// "ci" tag every window is the test driver's.
const realWindow = true
