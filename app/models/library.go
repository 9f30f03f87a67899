package models

import (
	"context"

	"github.com/churon/churon/models/library"
)

// The library's building blocks block while they read or write the disk:
// a front end that draws calls them off its drawing goroutine. Each change
// is followed by a LibraryChanged event, so every front end hears of it.

// List reads the library: every model with what its header says.
func (s *Service) List(ctx context.Context) ([]library.Model, error) {
	lib, err := s.library()
	if err != nil {
		return nil, err
	}
	return lib.List(ctx)
}

// Find looks a model up by name or path.
func (s *Service) Find(ctx context.Context, query string) (library.Model, error) {
	lib, err := s.library()
	if err != nil {
		return library.Model{}, err
	}
	return lib.Find(ctx, query)
}

// AddFile adds a GGUF file the person has to the library, used where it
// is (not copied).
func (s *Service) AddFile(path string) error {
	return s.change(func(l *library.Library) error { return l.AddFile(path) })
}

// AddFolder adds a folder whose GGUF files are listed, now and later.
func (s *Service) AddFolder(dir string) error {
	return s.change(func(l *library.Library) error { return l.AddFolder(dir) })
}

// Remove deletes a model from the library and reports whether the file
// was deleted (one Churon downloaded) or only forgotten (one the person
// added, left where it is).
func (s *Service) Remove(m library.Model) (deleted bool, err error) {
	err = s.change(func(l *library.Library) error {
		var e error
		deleted, e = l.Delete(m)
		return e
	})
	return deleted, err
}

// Verify recomputes a model's SHA-256 and compares it with the hub's
// (nil when they match).
func (s *Service) Verify(ctx context.Context, m library.Model) error {
	lib, err := s.library()
	if err != nil {
		return err
	}
	_, err = lib.Verify(ctx, m)
	return err
}

// change runs a library change, then lists the library in the background
// for LibraryChanged.
func (s *Service) change(f func(*library.Library) error) error {
	lib, err := s.library()
	if err != nil {
		return err
	}
	err = f(lib)
	s.background("list", func() error { s.listLibrary(); return nil })
	return err
}

func (s *Service) listLibrary() {
	ms, err := s.List(s.ctx)
	if s.ctx.Err() == nil {
		s.emit(LibraryChanged{Models: ms, Err: err})
	}
}
