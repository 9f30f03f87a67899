package models

import (
	"github.com/churon/churon/models/download"
	"github.com/churon/churon/models/library"
)

// Event is something the service reports on Events: one of the types
// below. Switch on the concrete type.
type Event interface{ event() }

// DownloadsChanged: a download was added, moved, paused, resumed or
// ended; read Downloads again. It is sent a few times a second at most,
// and not at all while nothing moves.
type DownloadsChanged struct{}

// DownloadEnded: one file's download ended: Completed, Failed (Err says
// why) or Canceled.
type DownloadEnded struct {
	Dest, Label string
	Status      download.Status
	Err         error
}

// ModelReady: every part of a model queued with DownloadCatalog or
// QueueVariant is in place. Load is true when the person asked for the
// model to be loaded once downloaded: the front end loads Path.
type ModelReady struct {
	Path string
	Load bool
}

// LibraryChanged is the library as it is now, after a download completed
// or a change (AddFile, AddFolder, Remove). Err is set when it could not
// be listed.
type LibraryChanged struct {
	Models []library.Model
	Err    error
}

// Pending: the hub's file list of catalog model ID is being fetched (On)
// or has arrived (!On), so a front end can show the button as busy.
type Pending struct {
	ID string
	On bool
}

// Error reports a command that failed (Op names it: "download",
// "add file", "delete", "save token"...).
type Error struct {
	Op  string
	Err error
}

func (DownloadsChanged) event() {}
func (DownloadEnded) event()    {}
func (ModelReady) event()       {}
func (LibraryChanged) event()   {}
func (Pending) event()          {}
func (Error) event()            {}
