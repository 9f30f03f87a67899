package core

import (
	"context"

	"github.com/churon/churon/models/library"
)

// ListModels lists the library's models off Fyne's goroutine (reading
// every model's header takes a moment on slow disks) and shows them there,
// unless a newer listing was started meanwhile: each call moves gen on.
func (w *Window) ListModels(gen *int, show func([]library.Model, error)) {
	*gen++
	g := *gen
	go func() {
		ctx, cancel := context.WithTimeout(w.Ctx, DiscoverTimeout)
		defer cancel()
		ms, err := w.Models.List(ctx)
		w.Do(func() {
			if g == *gen {
				show(ms, err)
			}
		})
	}()
}
