package session

import (
	api "github.com/churon/churon/app/api/session"

	"context"
	"errors"
	"sync"
)

// Exclusive gives the caller the machine to itself (the Compare page while
// it measures): no answer starts and the batch stands still after its
// current step until release is called; answers asked for meanwhile
// wait. It returns once the batch stands still, or with ctx's error.
func (m *Manager) Exclusive(ctx context.Context) (release func(), err error) {
	var b *Batch
	if err := m.call(func() error {
		if m.s.closing {
			return api.ErrClosed
		}
		m.s.exclusive++
		b = m.s.batch
		return nil
	}); err != nil {
		return nil, err
	}
	resume := func() {}
	if b != nil {
		if resume, err = b.Pause(ctx); err != nil {
			resume = func() {}
			if errors.Is(err, api.ErrClosed) { // the model went meanwhile: nothing runs
				err = nil
			}
		}
	}
	var once sync.Once
	release = func() {
		once.Do(func() {
			resume()
			_ = m.call(func() error {
				m.s.exclusive--
				return nil
			})
		})
	}
	if err != nil {
		release()
		return nil, err
	}
	return release, nil
}
