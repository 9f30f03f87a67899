package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/churon/churon/app/export"
	"github.com/churon/churon/app/session"
	"github.com/churon/churon/app/store"
	"github.com/churon/churon/internal/cputime"
	"github.com/churon/churon/internal/gcpace/cmalloc"
)

// errLimit is a measurement that ran past its time limit.
var errLimit = errors.New("over the time limit")

// searchTerms are looked for in the store and in the sidebar: common and
// rare, English and Korean, of three characters or more (the trigram
// index) and of two (a scan).
var searchTerms = []string{"zebra", "김치찌개", "weather", "모델", "lazy dog"}

type searchFigure struct {
	Query string
	Took  time.Duration
	Hits  int
	// CPU is the process's CPU time for the search (in the sidebar: the
	// store's search and the rows shown and laid out); PaintCPU that of
	// the painting after it (headless: Fyne's software painter).
	CPU, PaintCPU time.Duration
}

type libFigures struct {
	Import, Export time.Duration
	// ImportCPU and ExportCPU are the CPU time they took (user and
	// system, the collector's too): on a shared machine the wall time
	// also counts the waits for a core.
	ImportCPU, ExportCPU time.Duration
	Imported             int
	ExportBytes          int64
	Search               []searchFigure
}

// libraryFigures imports the zip into a new database at db through the
// session's Import (what the window's import and a dropped file run),
// exports every chat as the window's "Export all" does, and searches.
func libraryFigures(ctx context.Context, db, zipPath, exportPath string, limit time.Duration, profile string) (libFigures, error) {
	var f libFigures
	if profile != "" {
		p, err := os.Create(profile)
		if err != nil {
			return f, err
		}
		defer p.Close()
		if err := pprof.StartCPUProfile(p); err != nil {
			return f, err
		}
		defer pprof.StopCPUProfile()
	}
	st, err := store.Open(ctx, db)
	if err != nil {
		return f, err
	}
	defer st.Close()
	m := session.New(st, session.Options{})
	defer m.Close()
	go func() { // nobody else reads the events here
		for range m.Events() {
		}
	}()
	in, err := os.Open(zipPath)
	if err != nil {
		return f, err
	}
	defer in.Close()
	ictx, cancel := context.WithTimeout(ctx, 5*limit) // the library must be there for the rest
	defer cancel()
	t0, c0 := time.Now(), cputime.Process()
	res, err := m.Import(ictx, in)
	if err != nil {
		return f, fmt.Errorf("import: %w", err)
	}
	f.Import, f.ImportCPU, f.Imported = time.Since(t0), cputime.Process()-c0, len(res.Conversations)

	out, err := os.Create(exportPath)
	if err != nil {
		return f, err
	}
	defer out.Close()
	t0, c0 = time.Now(), cputime.Process()
	chats, err := m.Export(ctx, nil)
	if err != nil {
		return f, fmt.Errorf("export: %w", err)
	}
	w := bufio.NewWriter(out)
	if err := export.WriteJSON(w, chats, export.Options{}); err != nil {
		return f, err
	}
	if err := w.Flush(); err != nil {
		return f, err
	}
	f.Export, f.ExportCPU = time.Since(t0), cputime.Process()-c0
	chats = nil
	if fi, err := out.Stat(); err == nil {
		f.ExportBytes = fi.Size()
	}

	for _, q := range searchTerms {
		t0, c0 := time.Now(), cputime.Process()
		p, err := m.SearchConversations(q, nil, 100) // the sidebar's first page
		if err != nil {
			return f, fmt.Errorf("search %q: %w", q, err)
		}
		f.Search = append(f.Search, searchFigure{Query: q, Took: time.Since(t0), Hits: len(p.Hits), CPU: cputime.Process() - c0})
	}
	return f, nil
}

// rss is this process's resident memory in bytes.
func rss() int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

func ms(d time.Duration) string {
	if d <= 0 {
		return "—"
	}
	if d < 10*time.Millisecond {
		return fmt.Sprintf("%.1f ms", float64(d)/1e6)
	}
	if d < 10*time.Second {
		return fmt.Sprintf("%.0f ms", float64(d)/1e6)
	}
	return fmt.Sprintf("%.1f s", d.Seconds())
}

func mb(b int64) string { return fmt.Sprintf("%.0f MB", float64(b)/1e6) }

// table is the benchmark's report.
type table struct {
	notes []string
	rows  [][3]string
}

func (t *table) note(format string, args ...any) {
	t.notes = append(t.notes, fmt.Sprintf(format, args...))
}

func (t *table) add(what, took, more string) { t.rows = append(t.rows, [3]string{what, took, more}) }

func (t *table) addChild(what string, r result, err error, more func(result) string) {
	switch {
	case errors.Is(err, errLimit) && r.Open > 0:
		t.add(what, ms(r.Open), more(r)+"; then stopped at the limit")
	case errors.Is(err, errLimit):
		t.add(what, "> limit", "")
	case err != nil:
		t.add(what, "failed", err.Error())
	case r.Err != "":
		t.add(what, "failed", r.Err)
	default:
		took := r.Start
		if r.Open > 0 {
			took = r.Open
		}
		t.add(what, ms(took), more(r))
	}
}

func (t *table) print(w io.Writer) {
	for _, n := range t.notes {
		fmt.Fprintln(w, n)
	}
	width := 0
	for _, r := range t.rows {
		width = max(width, len([]rune(r[0])))
	}
	line := strings.Repeat("─", width+2+10+2+40)
	fmt.Fprintln(w, line)
	for _, r := range t.rows {
		fmt.Fprintf(w, "%s%s  %10s  %s\n", r[0], strings.Repeat(" ", width-len([]rune(r[0]))), r[1], r[2])
	}
	fmt.Fprintln(w, line)
}

// cHeap tells the C heap's figures, when they were read.
func cHeap(s cmalloc.Stats) string {
	if s == (cmalloc.Stats{}) {
		return ""
	}
	return fmt.Sprintf("; C heap in use %s, free %s", mb(int64(s.InUse)), mb(int64(s.Free)))
}

// memAlong says the memory at a few steps of a scroll (at most six,
// evenly apart, the last included): the RSS added and the Go heap then.
func memAlong(mem []memPoint) string {
	const most = 6
	var parts []string
	for i := range most {
		j := (i + 1) * (len(mem) - 1) / most
		if i > 0 && j == (i*(len(mem)-1))/most {
			continue
		}
		p := mem[j]
		parts = append(parts, fmt.Sprintf("step %d (%s): +%s, Go heap %s", p.Step, p.At.Round(time.Second), mb(p.RSS), mb(p.GoHeap)))
	}
	return strings.Join(parts, "; ")
}
