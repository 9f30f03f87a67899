// Package chat is the conversation view of Churon's window: the messages
// of one conversation as they stream in (view.go), one message with its
// Markdown body, footer and actions (message.go), and the message box
// with Send and Stop under them (composer.go, input.go).
//
// A chat costs what is in sight, however long it is: its messages are
// read a page at a time, the last page first (pages.go), and only those
// in and near sight have widgets, each measured once and placed by the
// heights of all (column.go); the widgets of a message gone from sight
// serve the next that comes into it (shells.go).
//
// The shell (package ui) makes a View and a Composer on a core.Window and
// hands them the session's events; sending and stopping are the shell's,
// which the Composer is given.
package chat
