package outbox

// Worker runs functions one at a time, in the order they were queued, on
// a goroutine of its own; Queue never blocks the caller. It is how a
// service or a window keeps slow work (the disk) off its own goroutine
// without reordering it.
type Worker struct {
	box  *Box[func()]
	done chan struct{}
}

// NewWorker starts a worker.
func NewWorker() *Worker {
	w := &Worker{box: New(Hooks[func()]{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		for f := range w.box.Out() {
			f()
		}
	}()
	return w
}

// Queue adds f after what is queued. After Close it does nothing.
func (w *Worker) Queue(f func()) { w.box.Push(f) }

// Sync waits until everything queued before it has run.
func (w *Worker) Sync() {
	done := make(chan struct{})
	w.box.Push(func() { close(done) })
	<-done
}

// Close runs what is queued and waits for the last of it.
func (w *Worker) Close() {
	w.box.Close()
	<-w.done
}
