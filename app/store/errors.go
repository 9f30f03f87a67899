package store

import "errors"

var (
	// ErrNotFound is returned when a conversation or message does not
	// exist (or, for conversations, has been purged).
	ErrNotFound = errors.New("store: not found")
	// ErrSchemaTooNew is returned by Open when the database was written by
	// a newer Churon whose schema this build does not know.
	ErrSchemaTooNew = errors.New("store: database schema is newer than this program")
	// ErrInvalid is returned for arguments the store refuses (an unknown
	// role, an empty search).
	ErrInvalid = errors.New("store: invalid argument")
	// ErrBusy is returned by a write that waited BusyTimeout for another
	// write of the same process.
	ErrBusy = errors.New("store: database busy")
)
