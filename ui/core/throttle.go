package core

import "time"

// Coalesce is how often streamed text reaches the widgets at most: the
// shell's bridge merges the Token events of that interval into one
// update, so a fast model costs the UI about twenty re-renders a second,
// not one per token.
const Coalesce = 50 * time.Millisecond

// Throttle paces the re-rendering of streaming Markdown (a chat answer, a
// Compare column): a long text costs more to lay out, so it is rendered
// again at most every Coalesce and never more than a third of the time.
// Used on Fyne's goroutine only.
type Throttle struct {
	pending bool
	last    time.Time     // when the last render ended
	cost    time.Duration // what it took
}

// Schedule renders now, or later through do (onto Fyne's goroutine) when
// the last render was too recent for what rendering costs.
func (t *Throttle) Schedule(do func(func()), render func()) {
	if t.pending {
		return
	}
	wait := max(Coalesce, 3*t.cost) - time.Since(t.last)
	if wait <= 0 {
		t.measure(render)
		return
	}
	t.pending = true
	time.AfterFunc(wait, func() {
		do(func() {
			t.pending = false
			t.measure(render)
		})
	})
}

// measure runs render and remembers what it cost.
func (t *Throttle) measure(render func()) {
	start := time.Now()
	render()
	t.last = time.Now()
	t.cost = t.last.Sub(start)
}
