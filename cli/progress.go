package cli

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/churon/churon/models/download"
)

// pullProgress shows how `churon pull` is going: on a terminal a bar
// redrawn in place; anywhere else (a log, a pipe, CI) a line when a file
// starts arriving, one at each quarter of it and one at the end, so that a log of
// a stalled download is not a column of identical "0 B" lines. Retries
// get a line of their own in both, so a bar that does not move says why.
type pullProgress struct {
	w   io.Writer
	tty bool

	mu      sync.Mutex // retries come from the download's goroutines
	label   string
	barUp   bool // a bar is drawn on the current line
	started bool
	quarter int // the last quarter printed, plain output only
}

// snapshot is what one progress line shows.
type snapshot struct {
	label  string
	size   int64 // -1: unknown
	done   int64
	status download.Status
	rate   float64
	eta    time.Duration
}

func snapshotOf(d *download.Download) snapshot {
	return snapshot{label: d.Request().Label, size: d.Size(), done: d.BytesComplete(), status: d.Status(), rate: d.Rate(), eta: d.ETA()}
}

func (s snapshot) fraction() float64 {
	if s.size <= 0 {
		return 0
	}
	return min(float64(s.done)/float64(s.size), 1)
}

// follow shows d's progress until it ends.
func (p *pullProgress) follow(d *download.Download) {
	p.mu.Lock()
	p.label, p.started, p.quarter, p.barUp = d.Request().Label, false, 0, false
	p.mu.Unlock()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	p.show(snapshotOf(d), false)
	for {
		select {
		case <-d.Done():
			p.show(snapshotOf(d), true)
			return
		case <-tick.C:
			p.show(snapshotOf(d), false)
		}
	}
}

// show prints s if it is worth a line: always on a terminal (the bar is
// redrawn), elsewhere only the first, each new quarter and the last.
func (p *pullProgress) show(s snapshot, last bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tty {
		end := ""
		if last {
			end = "\n"
		}
		fmt.Fprintf(p.w, "\r%s\x1b[K%s", progressLine(s, true), end)
		p.barUp = !last
		return
	}
	q := int(s.fraction() * 4)
	switch {
	case last && s.status == download.Completed:
		fmt.Fprintln(p.w, progressLine(s, false))
	case last:
		// The error that ended it is printed by the command.
	case !p.started && s.status == download.Running && (s.size >= 0 || s.done > 0):
		// The first line waits for the server's answer, so that a file
		// that cannot be fetched at all prints only its error.
		fmt.Fprintln(p.w, progressLine(s, false))
	case !p.started:
		return
	case q > p.quarter && q < 4:
		fmt.Fprintln(p.w, progressLine(s, false))
	default:
		return
	}
	p.started, p.quarter = true, q
}

// retry is download.Options.OnRetry: "retrying in 4 s (attempt 2 of 8):
// connection reset", under the bar's label.
func (p *pullProgress) retry(r download.Retry) {
	p.mu.Lock()
	defer p.mu.Unlock()
	clear := ""
	if p.barUp {
		clear = "\r\x1b[K"
		p.barUp = false
	}
	fmt.Fprintf(p.w, "%s%s: retrying in %s (attempt %d of %d): %s\n", clear, p.label, waitText(r.Wait), r.Attempt, r.Max, r.Reason())
}

func waitText(d time.Duration) string {
	if d < time.Second {
		return fmt.Sprintf("%.1f s", d.Seconds())
	}
	return fmt.Sprintf("%.0f s", d.Round(time.Second).Seconds())
}

func progressLine(s snapshot, bar bool) string {
	line := s.label + " "
	if bar {
		const width = 30
		filled := int(s.fraction() * width)
		line += "[" + strings.Repeat("#", filled) + strings.Repeat(".", width-filled) + "] "
	}
	if s.size >= 0 {
		line += fmt.Sprintf("%3.0f%% %s/%s", s.fraction()*100, download.FormatBytes(s.done), download.FormatBytes(s.size))
	} else {
		line += download.FormatBytes(s.done)
	}
	switch s.status {
	case download.Running:
		if s.rate > 0 {
			line += fmt.Sprintf(" %s/s", download.FormatBytes(int64(s.rate)))
		}
		if s.eta >= 0 && s.size > 0 {
			line += " ETA " + s.eta.Round(time.Second).String()
		}
	case download.Completed:
		line += " done"
	default:
		line += " " + s.status.String()
	}
	return line
}
