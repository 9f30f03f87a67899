package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"image"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"sync"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/app"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/churon/churon/app/compare"
	"github.com/churon/churon/app/models"
	"github.com/churon/churon/app/paths"
	"github.com/churon/churon/app/session"
	"github.com/churon/churon/app/store"
	"github.com/churon/churon/engine/arch"
	"github.com/churon/churon/internal/cputime"
	"github.com/churon/churon/internal/fynecache" // also sets the app's Fyne cache lifetime, as main.go has it
	"github.com/churon/churon/internal/gcpace"
	"github.com/churon/churon/internal/gcpace/cmalloc"
	"github.com/churon/churon/internal/percentile"
	"github.com/churon/churon/models/discover"
	"github.com/churon/churon/models/header"
	"github.com/churon/churon/ui"
	"github.com/churon/churon/ui/core"
	"github.com/churon/churon/ui/locale"
	uimodels "github.com/churon/churon/ui/models"
)

// result is what a child process measured, as JSON on its stdout.
type result struct {
	Start time.Duration // to the first frame with the list shown
	// StartCPU is the process's CPU time then (the runtime's start
	// included, not the exec before it).
	StartCPU time.Duration
	// StartWindowCPU is the CPU time of the window's thread then (the
	// one that builds, lays out and paints it): unlike the wall time it
	// does not count the waits for a core on a busy machine, nor the
	// other threads' work (the store's reading, the GL driver's).
	StartWindowCPU time.Duration
	RSS            int64 // then
	// Open is the long chat's open to its first paint; OpenRSS what
	// it added to the resident memory.
	Open    time.Duration
	OpenRSS int64
	// The scroll through it, and the memory added.
	Scroll    scrollFigures
	ScrollRSS int64
	// ScrollLive is what the Go heap still held after the scroll, a
	// collection done; ScrollSettled the resident memory added once
	// that collection's garbage went back to the system.
	ScrollLive, ScrollSettled int64
	// ScrollC is the C heap at the end of the scroll (in a window: the
	// driver's textures, under a software OpenGL); zero where unread.
	ScrollC cmalloc.Stats
	// IdleRSS is the resident memory added once the window idled past
	// the textures' lifetime and the C heap's trimmer (window only), and
	// IdleC the C heap then.
	IdleRSS       int64
	IdleC         cmalloc.Stats
	SidebarSearch []searchFigure
	Err           string
}

// ui is how a child reaches the window: on its goroutine, and settled
// (every posted update and queued reading done).
type window struct {
	w      fyne.Window
	u      *ui.UI
	do     func(func())
	settle func()
	// paint paints the window (headless: in software) or, in a real
	// window, waits for the driver's next frame to be painted.
	paint func()
	// firstPost is when the first update after a time was posted
	// (headless only).
	firstPost func(after time.Time) (time.Time, bool)
	// settleFrames settles as settle does, telling frame what each
	// update posted cost the window's goroutine, wall and CPU time: each
	// is a turn of the driver's loop of its own (headless only).
	settleFrames func(frame func(wall, cpu time.Duration))
}

func child(args []string) int {
	t0 := time.Now()
	fs := flag.NewFlagSet("child", flag.ExitOnError)
	mode := fs.String("mode", "headless", "headless or window")
	what := fs.String("what", "start", "start or open")
	db := fs.String("db", "", "database")
	home := fs.String("home", "", "CHURON_HOME")
	long := fs.String("long", LongTitle, "title of the chat to open")
	limit := fs.Duration("limit", time.Minute, "time limit")
	profile := fs.String("cpuprofile", "", "write a CPU profile here")
	memProfile := fs.String("memprofile", "", "write a heap profile here at the end (after a GC)")
	ctrim := fs.Bool("ctrim", true, "trim the C heap as desktop.Run does (false: to measure without)")
	_ = fs.Parse(args)
	if *profile != "" {
		f, err := os.Create(*profile)
		if err != nil {
			return fail(err)
		}
		_ = pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	os.Setenv(paths.EnvHome, *home)
	gcpace.Start(os.Getenv) // as desktop.Run does
	if *ctrim {
		cmalloc.Start()
	}
	_, _ = locale.Set("en")

	st, err := store.Open(context.Background(), *db)
	if err != nil {
		return fail(err)
	}
	m := session.New(st, session.Options{})
	mdl := models.New(models.Options{Headers: header.Reader{}, Settings: m, Architectures: arch.Names(), PartLabel: uimodels.PartLabel})
	opt := ui.Options{Session: m, Compare: compare.Runner{}, Models: mdl,
		Discover: func(context.Context) ([]discover.Model, error) { return nil, nil }}
	deadline := t0.Add(*limit)
	measure := func(w *window) result {
		return measureWindow(w, t0, deadline, *what, *long, *mode == "headless")
	}
	var r result
	if *mode == "headless" {
		var (
			mu    sync.Mutex
			queue []func()
		)
		var posted []time.Time // when each update was posted, for sidebarSearch
		opt.Do = func(f func()) {
			mu.Lock()
			queue = append(queue, f)
			posted = append(posted, time.Now())
			mu.Unlock()
		}
		a := test.NewApp()
		a.Settings().SetTheme(ui.NewTheme())
		w := test.NewWindow(nil)
		w.Resize(fyne.NewSize(1180, 780))
		u := ui.New(a, w, opt)
		win := &window{w: w, u: u, do: func(f func()) { f() }}
		win.paint = func() { w.Canvas().Capture() }
		win.firstPost = func(after time.Time) (time.Time, bool) {
			mu.Lock()
			defer mu.Unlock()
			for _, t := range posted {
				if t.After(after) {
					return t, true
				}
			}
			posted = posted[:0]
			return time.Time{}, false
		}
		win.settleFrames = func(frame func(wall, cpu time.Duration)) {
			for range 50 {
				c := u.Screens().Core
				c.Commands.Sync()
				c.Reads.Sync()
				mu.Lock()
				q := queue
				queue = nil
				mu.Unlock()
				if len(q) == 0 {
					return
				}
				for _, f := range q {
					t, cpu := time.Now(), cputime.Thread()
					f()
					frame(time.Since(t), cputime.Thread()-cpu)
				}
			}
		}
		win.settle = func() { win.settleFrames(func(time.Duration, time.Duration) {}) }
		// The window's goroutine is this one, on a thread of its own, so
		// that a frame's CPU time is the thread's.
		runtime.LockOSThread()
		r = measure(win)
	} else {
		a := app.NewWithID("io.github.churon.Churon.scale")
		a.Settings().SetTheme(ui.NewTheme())
		w := a.NewWindow("Churon")
		w.Resize(fyne.NewSize(1180, 780))
		u := ui.New(a, w, opt)
		win := &window{w: w, u: u, do: fyne.DoAndWait}
		probe := newPaintProbe()
		w.SetContent(container.NewStack(w.Content(), container.NewWithoutLayout(probe.r)))
		win.paint = func() { probe.next(deadline) }
		win.settle = func() {
			for range 5 {
				c := u.Screens().Core
				c.Commands.Sync()
				c.Reads.Sync()
				fyne.DoAndWait(func() {})
			}
		}
		w.Show()
		go func() {
			r = measure(win)
			fyne.Do(a.Quit)
		}()
		a.Run()
	}
	_ = r // measureWindow reported it
	if *memProfile != "" {
		if err := writeHeapProfile(*memProfile); err != nil {
			fmt.Fprintln(os.Stderr, "scale:", err)
		}
	}
	return 0
}

// writeHeapProfile writes what is live now, after a collection.
func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	runtime.GC()
	if err := pprof.WriteHeapProfile(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func fail(err error) int {
	out, _ := json.Marshal(result{Err: err.Error()})
	fmt.Println(string(out))
	return 0
}

// report writes what was measured so far as a line of JSON: a child
// killed in a step it could not leave still tells the ones before.
func report(r result) {
	out, _ := json.Marshal(r)
	fmt.Println(string(out))
}

func measureWindow(w *window, t0, deadline time.Time, what, long string, headless bool) result {
	var r result
	defer func() { report(r) }()
	frame := func() { w.paint() }
	// The first frame: the list read and shown (its rows, or the hint of
	// an empty library), then painted.
	var row fyne.Tappable
	for {
		w.settle()
		w.do(func() { row = findRow(w.w.Content(), long) })
		if row != nil || long == "" || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	frame()
	r.Start, r.StartCPU, r.RSS = time.Since(t0), cputime.Process(), rss()
	w.do(func() { r.StartWindowCPU = cputime.Thread() })
	if what != "open" {
		return r
	}
	if headless {
		// Search first: the chat's scroll may run into the limit.
		r.SidebarSearch = sidebarSearch(w, frame, deadline)
		w.do(func() { row = findRow(w.w.Content(), long) })
		report(r)
	}
	if row == nil {
		r.Err = fmt.Sprintf("no row titled %q in the sidebar", long)
		return r
	}
	// Open the long chat as a click does; its first paint is when its
	// column holds messages.
	before := rss()
	t1 := time.Now()
	w.do(func() { test.Tap(row) })
	var scroll *container.Scroll
	for {
		w.settle()
		w.do(func() { scroll = chatScroll(w.u) })
		if scroll != nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	frame()
	r.Open, r.OpenRSS = time.Since(t1), rss()-before
	report(r)
	if scroll == nil {
		r.Err = "the chat shows no messages"
		return r
	}
	r.Scroll = scrollThrough(w, scroll, frame, deadline, headless)
	r.ScrollRSS = rss() - before
	r.ScrollC, _ = cmalloc.Read()
	report(r)
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	r.ScrollLive = int64(ms.HeapAlloc)
	debug.FreeOSMemory()
	r.ScrollSettled = rss() - before
	if !headless {
		report(r)
		r.IdleRSS, r.IdleC = idle(frame, before)
	}
	return r
}

// idleFor is how long idle waits: the textures' lifetime (FYNE_CACHE,
// as Fyne reads it) and the C heap trimmer's period, and a little.
func idleFor() time.Duration {
	life, err := time.ParseDuration(os.Getenv(fynecache.Env))
	if err != nil {
		life = time.Minute // Fyne's own
	}
	return life + cmalloc.Every + 2*time.Second
}

// idle waits, in a real window, until the textures painted during the
// scroll are past their lifetime and the C heap's trimmer has looked
// again, painting a frame a second as a blinking cursor does (Fyne frees
// expired textures on its frames), and returns the resident memory
// added since before and the C heap then. It runs after the limit: the
// parent allows for it.
func idle(frame func(), before int64) (int64, cmalloc.Stats) {
	end := time.Now().Add(idleFor())
	for time.Now().Before(end) {
		time.Sleep(time.Second)
		frame()
	}
	c, _ := cmalloc.Read()
	return rss() - before, c
}

// scrollThrough scrolls the chat from where it opened (its end) to its
// top and back to its end, a screenful less a little at a time, as a
// mouse wheel does, and times each step: the event handled and what it
// posted done, the window laid out (a frame's work but its painting).
// Headless, every paintEvery-th step the window is painted too (Fyne's
// test driver paints in software, far slower than a GPU: painting every
// step would take minutes), and the slowest painted step is kept apart.
// In a real window every step is timed to the frame the driver paints
// after it (which waits for the driver's next tick, up to 1/60 s).
func scrollThrough(w *window, s *container.Scroll, frame func(), deadline time.Time, headless bool) (sc scrollFigures) {
	begin, rss0 := time.Now(), rss()
	readMem := func() {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		p := memPoint{Step: sc.Frames, At: time.Since(begin), RSS: rss() - rss0, GoHeap: int64(ms.HeapAlloc)}
		if c, ok := cmalloc.Read(); ok {
			p.CHeapMB = float64(c.InUse) / 1e6
		}
		sc.Mem = append(sc.Mem, p)
	}
	defer readMem()
	var steps []time.Duration
	defer func() {
		sc.StepP50, sc.StepP99 = percentile.Of(steps, 50), percentile.Of(steps, 99)
		sc.StepsOver = countOver(steps, frameBudget)
	}()
	step := func(dy float32) (still bool) {
		t := time.Now()
		var before, after float32
		cpu := cputime.Thread()
		w.do(func() {
			before = s.Offset.Y
			s.Scrolled(&fyne.ScrollEvent{Scrolled: fyne.Delta{DY: dy}})
		})
		if headless {
			// The wheel event is one turn of the driver's loop, each
			// update it posted another.
			sc.frame(time.Since(t), cputime.Thread()-cpu)
			w.settleFrames(sc.frame)
		} else {
			w.settle()
			frame()
		}
		d := time.Since(t)
		sc.Slowest, sc.All, sc.Frames = max(sc.Slowest, d), sc.All+d, sc.Frames+1
		steps = append(steps, d)
		if headless && sc.Frames%paintEvery == 0 {
			frame()
			sc.SlowestPainted = max(sc.SlowestPainted, time.Since(t))
		}
		w.do(func() { after = s.Offset.Y })
		if sc.Frames%memEvery == 0 {
			readMem()
		}
		return after == before
	}
	page := s.Size().Height * 0.9
	for _, dy := range []float32{page, -page} {
		still := 0
		for still < 3 {
			if time.Now().After(deadline) || sc.Frames == 100000 {
				return sc
			}
			if step(dy) {
				still++ // more may load at the edge: try again
			} else {
				still = 0
			}
		}
	}
	sc.Done = true
	return sc
}

// paintProbe is a pixel on top of a real window: the GL painter asks its
// raster for an image when it paints the window after the probe was
// refreshed, which says when a frame reached the screen (Capture only
// reads back what the last frame left).
type paintProbe struct {
	r    *canvas.Raster
	mu   sync.Mutex
	last time.Time
}

func newPaintProbe() *paintProbe {
	p := &paintProbe{}
	p.r = canvas.NewRaster(func(w, h int) image.Image {
		p.mu.Lock()
		p.last = time.Now()
		p.mu.Unlock()
		return image.NewNRGBA(image.Rect(0, 0, max(w, 1), max(h, 1)))
	})
	p.r.Resize(fyne.NewSize(1, 1))
	return p
}

// next refreshes the probe and waits until the driver painted it.
func (p *paintProbe) next(deadline time.Time) {
	t := time.Now()
	fyne.DoAndWait(func() { canvas.Refresh(p.r) })
	for time.Now().Before(deadline) {
		p.mu.Lock()
		done := p.last.After(t)
		p.mu.Unlock()
		if done {
			return
		}
		time.Sleep(200 * time.Microsecond)
	}
}

const paintEvery = 10

// scrollFigures are a scroll's: its steps, the slowest, the slowest of
// those painted, all of them, and whether it went to the top and back.
// Headless, a step's turns of the window's goroutine are timed apart too
// (Turns: the wheel event, and each update it posted, as the driver runs
// each between its frames), wall and CPU time of the goroutine's thread.
type scrollFigures struct {
	Frames                  int
	Slowest, SlowestPainted time.Duration
	All                     time.Duration
	Done                    bool
	// StepP50 and StepP99 are the median and 99th percentile of the
	// steps; StepsOver counts the steps over 50 ms (a painted headless
	// step's painting not counted).
	StepP50, StepP99 time.Duration
	StepsOver        int

	Turns int
	// TurnSlowest is the slowest turn's wall time and TurnSlowestCPU its
	// CPU time; TurnMostCPU the most CPU time any took.
	TurnSlowest, TurnSlowestCPU, TurnMostCPU time.Duration
	// TurnsOver and TurnsOverCPU count the turns over 50 ms of wall and
	// of CPU time.
	TurnsOver, TurnsOverCPU int

	// Mem is the memory every memEvery steps: whether what the scroll
	// adds levels off (caches with a lifetime) or keeps growing with the
	// messages passed (something kept for each).
	Mem []memPoint
}

// memPoint is the memory after a step of a scroll: the resident size
// added since the open, and the Go heap in use then (garbage included:
// no collection is forced, so as not to disturb the timing).
type memPoint struct {
	Step    int
	At      time.Duration // since the scroll began
	RSS     int64
	GoHeap  int64
	CHeapMB float64 `json:",omitempty"` // glibc's heap in use, where read
}

// memEvery is how many scroll steps apart the memory is read.
const memEvery = 100

// frameBudget is the longest a frame may take (issue 25: 50 ms).
const frameBudget = 50 * time.Millisecond

// frame counts one turn of the window's goroutine.
func (sc *scrollFigures) frame(wall, cpu time.Duration) {
	sc.Turns++
	if wall > sc.TurnSlowest {
		sc.TurnSlowest, sc.TurnSlowestCPU = wall, cpu
	}
	sc.TurnMostCPU = max(sc.TurnMostCPU, cpu)
	if wall > frameBudget {
		sc.TurnsOver++
	}
	if cpu > frameBudget {
		sc.TurnsOverCPU++
	}
}

// sidebarSearch types each term in the sidebar's search box and times
// the rows' appearance, painted, from the end of the pause the box waits
// for after typing.
func sidebarSearch(w *window, frame func(), deadline time.Time) []searchFigure {
	var box *core.Entry
	walk(w.w.Content(), func(o fyne.CanvasObject) bool {
		if e, ok := o.(*core.Entry); ok && e.PlaceHolder == "Search chats" {
			box = e
		}
		return box == nil
	})
	if box == nil {
		return nil
	}
	var out []searchFigure
	for _, q := range searchTerms {
		if time.Now().After(deadline) {
			break
		}
		// The search starts when the box's pause after typing ends: the
		// first update posted after it (the pause's timer).
		t := time.Now()
		w.do(func() { box.SetText(q) })
		w.settle()
		start, ok := time.Time{}, false
		for !ok && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
			start, ok = w.firstPost(t.Add(ui.SearchDelay))
		}
		c0 := cputime.Process()
		w.settle()
		c1 := cputime.Process()
		frame()
		took := time.Since(start)
		n := 0
		if l := sidebarList(w.w.Content()); l != nil {
			n = l.Length()
		}
		out = append(out, searchFigure{Query: q, Took: took, Hits: n, CPU: c1 - c0, PaintCPU: cputime.Process() - c1})
	}
	w.do(func() { box.SetText("") })
	w.settle()
	return out
}

// sidebarList is the window's first list: the sidebar's.
func sidebarList(root fyne.CanvasObject) *widget.List {
	var list *widget.List
	walk(root, func(o fyne.CanvasObject) bool {
		if l, ok := o.(*widget.List); ok {
			list = l
		}
		return list == nil
	})
	return list
}

// findRow is the innermost thing to tap (not a button) in the sidebar
// that holds a text saying title (a label, or the text a row draws).
func findRow(root fyne.CanvasObject, title string) fyne.Tappable {
	list := sidebarList(root)
	if list == nil {
		return nil
	}
	var row fyne.Tappable
	walk(list, func(o fyne.CanvasObject) bool {
		_, button := o.(*widget.Button)
		if t, ok := o.(fyne.Tappable); ok && !button {
			found := false
			walk(o, func(o fyne.CanvasObject) bool {
				switch t := o.(type) {
				case *widget.Label:
					found = t.Text == title && t.Visible()
				case *canvas.Text:
					found = t.Text == title && t.Visible()
				case interface{ Text() string }: // a sidebar row's title: the whole of it
					found = t.Text() == title && o.Visible()
				}
				return !found
			})
			if found {
				row = t
			}
		}
		return true
	})
	return row
}

// chatScroll is the chat's scrolled column once it holds more than a
// screenful.
func chatScroll(u *ui.UI) *container.Scroll {
	var s *container.Scroll
	walk(u.Screens().Chat.Content(), func(o fyne.CanvasObject) bool {
		if sc, ok := o.(*container.Scroll); ok && sc.Visible() && sc.Content != nil && sc.Content.MinSize().Height > sc.Size().Height {
			s = sc
		}
		return s == nil
	})
	return s
}

// walk visits o and what it is made of, depth first, while visit says
// to go on.
func walk(o fyne.CanvasObject, visit func(fyne.CanvasObject) bool) bool {
	if o == nil {
		return true
	}
	if !visit(o) {
		return false
	}
	switch x := o.(type) {
	case *fyne.Container:
		for _, c := range x.Objects {
			if !walk(c, visit) {
				return false
			}
		}
	case fyne.Widget:
		for _, c := range test.WidgetRenderer(x).Objects() {
			if !walk(c, visit) {
				return false
			}
		}
	}
	return true
}

// countOver is how many of ds are over limit.
func countOver(ds []time.Duration, limit time.Duration) int {
	n := 0
	for _, d := range ds {
		if d > limit {
			n++
		}
	}
	return n
}
