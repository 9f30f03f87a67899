// Package chat is the conversation view of Churon's window: the messages
// of one conversation as they stream in (view.go), one message with its
// Markdown body, footer and actions (message.go), and the message box
// with Send and Stop under them (composer.go, input.go).
//
// The shell (package ui) makes a View and a Composer on a core.Window and
// hands them the session's events; sending and stopping are the shell's,
// which the Composer is given.
package chat
