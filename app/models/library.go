package models

import (
	"context"

	"github.com/churon/churon/models/library"
)

// ListLibrary lists the library in the background: LibraryChanged.
func (s *Service) ListLibrary() {
	s.background("list", func() error { s.listLibrary(); return nil })
}

func (s *Service) listLibrary() {
	ms, err := s.List(s.ctx)
	if s.ctx.Err() == nil {
		s.emit(LibraryChanged{Models: ms, Err: err})
	}
}

// AddFile adds a GGUF file the person has to the library, used where it
// is (not copied); AddFolder adds every GGUF file in a folder, now and
// later. LibraryChanged follows.
func (s *Service) AddFile(path string) {
	s.change("add file", func(l *library.Library) error { return l.AddFile(path) })
}

// AddFolder: see AddFile.
func (s *Service) AddFolder(dir string) {
	s.change("add folder", func(l *library.Library) error { return l.AddFolder(dir) })
}

// Delete removes a model from the library: a file Churon downloaded is
// deleted, one the person added is only forgotten. LibraryChanged follows.
func (s *Service) Delete(m library.Model) {
	s.change("delete", func(l *library.Library) error { _, err := s.Remove(m); return err })
}

// change runs a library change in the background, then lists the library.
func (s *Service) change(op string, f func(*library.Library) error) {
	s.background(op, func() error {
		lib, err := s.library()
		if err == nil {
			err = f(lib)
		}
		s.listLibrary()
		return err
	})
}

// Verify recomputes a model's SHA-256 and compares it with the hub's;
// done receives the outcome (nil when it matches), on the service's
// goroutine.
func (s *Service) Verify(m library.Model, done func(error)) {
	s.background("verify", func() error {
		lib, err := s.library()
		if err == nil {
			_, err = lib.Verify(s.ctx, m)
		}
		done(err)
		return nil
	})
}

// List reads the library now (blocking; front ends that must not wait use
// ListLibrary).
func (s *Service) List(ctx context.Context) ([]library.Model, error) {
	lib, err := s.library()
	if err != nil {
		return nil, err
	}
	return lib.List(ctx)
}

// Find looks a model up by name or path (blocking).
func (s *Service) Find(ctx context.Context, query string) (library.Model, error) {
	lib, err := s.library()
	if err != nil {
		return library.Model{}, err
	}
	return lib.Find(ctx, query)
}

// Remove deletes a model from the library now (blocking) and reports
// whether the file was deleted (Churon's own) or only forgotten.
func (s *Service) Remove(m library.Model) (deleted bool, err error) {
	lib, err := s.library()
	if err != nil {
		return false, err
	}
	return lib.Delete(m)
}
