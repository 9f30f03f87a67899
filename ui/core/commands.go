package core

import "github.com/churon/churon/internal/outbox"

// Commands carries the window's commands to the services off Fyne's
// goroutine, so that the window never waits on the disk: a command that
// writes to the database, reads a long conversation or lists a folder
// runs on the worker, in the order the person gave them, and its outcome
// is applied back on Fyne's goroutine. The queue never blocks the window
// and never drops a command.
type Commands struct {
	work *outbox.Worker
	do   func(func())
}

// NewCommands starts the worker; do runs a function on Fyne's goroutine.
func NewCommands(do func(func())) *Commands {
	return &Commands{work: outbox.NewWorker(), do: do}
}

// Run queues f; when it fails, fail runs with the error on Fyne's
// goroutine (nil: the error is dropped).
func (c *Commands) Run(f func() error, fail func(error)) {
	c.work.Queue(func() {
		if err := f(); err != nil && fail != nil {
			c.do(func() { fail(err) })
		}
	})
}

// Then queues work and applies its result on Fyne's goroutine.
func Then[T any](c *Commands, work func() (T, error), apply func(T, error)) {
	c.work.Queue(func() {
		v, err := work()
		c.do(func() { apply(v, err) })
	})
}

// Close lets the queued commands run and waits for the last one.
func (c *Commands) Close() { c.work.Close() }

// Sync waits until every command queued before it has run (their
// outcomes are then posted through do). Tests use it to settle the window
// before they look at it.
func (c *Commands) Sync() { c.work.Sync() }
