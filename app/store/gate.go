package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// gate makes the writers of one Store take turns in the order they came.
// SQLite lets one connection write at a time and makes the others wait
// in its busy handler, which sleeps and tries again (up to 100 ms between
// tries): a writer that commits and begins again at once — an import,
// batch after batch — would take the lock back before a waiting writer
// woke, and keep it. Through the gate a writer of this process waits in
// line instead: a goroutine blocked on the channel gets the turn as soon
// as the one before it leaves (the runtime hands a full channel's freed
// place to its first waiting sender).
type gate chan struct{}

func newGate() gate { return make(gate, 1) }

// enter waits for the writer's turn: at most BusyTimeout, as SQLite's
// busy handler waits, or until ctx ends.
func (g gate) enter(ctx context.Context) error {
	select {
	case g <- struct{}{}:
		return nil
	default:
	}
	t := time.NewTimer(BusyTimeout)
	defer t.Stop()
	select {
	case g <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return fmt.Errorf("%w: another write of this process held the database for %s", ErrBusy, BusyTimeout)
	}
}

func (g gate) leave() { <-g }

// gated runs writes outside a transaction through the gate.
type gated struct{ s *Store }

func (g gated) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	if err := g.s.gate.enter(ctx); err != nil {
		return nil, err
	}
	defer g.s.gate.leave()
	return g.s.db.ExecContext(ctx, q, args...)
}

// writer is what a write outside a transaction runs through.
func (s *Store) writer() execer { return gated{s} }
