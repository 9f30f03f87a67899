// Package models is the model-management service: the catalog, the hub
// client, the download manager and its queue (multi-file models
// included), the library, the memory fit check, the recommendation for a
// new user and the auto-load of a model once its download is complete.
//
// It is shaped like the session manager and app/compare: commands return
// at once, what happens arrives in order on Events (never blocking the
// service, never dropped), and nothing here waits for a front end. The
// desktop's Models page and `churon pull`, `churon models`, `churon rm`
// are its two front ends; where a file from the hub is kept (Dest) is
// decided here only.
//
// The library's and the hub's building blocks (List, Find, AddFile,
// AddFolder, Remove, Verify, Resolve, Plan, Fetch, RemoteMeta) block while
// they read the disk or the network: the command line calls them
// directly, the window through its command worker (ui/core.Commands).
package models
