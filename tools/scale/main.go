// Command scale measures how Churon's window and library hold up with a
// large history. It writes a synthetic library (N conversations of M
// messages, 20–300 words each, English and Korean, some code and tables,
// and one long chat) as a zip of JSON exports, imports it through the
// app's own import, and measures, each in a process of its own so that
// every start is a real start:
//
//   - start-up to the first frame, empty and full, headless (Fyne's test
//     driver) and in a real window when a display (or Xvfb) is there;
//   - opening the long chat to its first paint, then scrolling it end to
//     end (the slowest frame), and the resident memory it took;
//   - search to first results, in the store and in the sidebar;
//   - import and export.
//
// Every step runs under a time limit; one over it is shown as "> limit".
//
//	go run ./tools/scale -n 10000 -m 12 -long 2000
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "child" {
		os.Exit(child(os.Args[2:]))
	}
	os.Exit(run())
}

type options struct {
	spec
	dir         string
	limit       time.Duration
	window      bool
	profile     string
	libraryOnly bool
}

func run() int {
	var o options
	flag.IntVar(&o.Convs, "n", 10000, "conversations")
	flag.IntVar(&o.Msgs, "m", 12, "messages a conversation")
	flag.IntVar(&o.Long, "long", 2000, "messages of the long chat (0: none)")
	flag.Uint64Var(&o.Seed, "seed", 1, "random seed of the library")
	flag.StringVar(&o.dir, "dir", "", "work folder (default: a new temporary one, removed after)")
	flag.DurationVar(&o.limit, "limit", 60*time.Second, "time limit of each measurement")
	flag.BoolVar(&o.window, "window", true, "measure in a real window too (needs $DISPLAY or Xvfb)")
	flag.StringVar(&o.profile, "cpuprofile", "", "write a CPU profile of the import and export here")
	flag.BoolVar(&o.libraryOnly, "library-only", false, "measure import, export and search only")
	flag.Parse()
	if o.dir != "" {
		if err := os.MkdirAll(o.dir, 0o755); err != nil {
			fmt.Fprintln(os.Stderr, "scale:", err)
			return 1
		}
	} else {
		d, err := os.MkdirTemp("", "churon-scale-")
		if err != nil {
			fmt.Fprintln(os.Stderr, "scale:", err)
			return 1
		}
		o.dir = d
		defer os.RemoveAll(d)
	}
	t := &table{}
	if err := measure(o, t); err != nil {
		t.print(os.Stdout)
		fmt.Fprintln(os.Stderr, "scale:", err)
		return 1
	}
	t.print(os.Stdout)
	return 0
}

func measure(o options, t *table) error {
	ctx := context.Background()
	zipPath := filepath.Join(o.dir, "library.zip")
	f, err := os.Create(zipPath)
	if err != nil {
		return err
	}
	if err := writeZip(f, o.spec); err != nil {
		f.Close()
		return fmt.Errorf("write the library: %w", err)
	}
	if err := f.Close(); err != nil {
		return err
	}
	st, _ := os.Stat(zipPath)
	msgs := o.Convs*o.Msgs + o.Long
	t.note("library: %d conversations × %d messages + a chat of %d = %d messages (zip of JSON, %.0f MB)",
		o.Convs, o.Msgs, o.Long, msgs, float64(st.Size())/1e6)

	db := filepath.Join(o.dir, "churon.db")
	empty := filepath.Join(o.dir, "empty.db")

	// The library, through the app's import; export; the store's search.
	lib, err := libraryFigures(ctx, db, zipPath, filepath.Join(o.dir, "export.json"), o.limit, o.profile)
	if err != nil {
		return err
	}
	t.add("import (session.Import of the zip)", ms(lib.Import), fmt.Sprintf("%d conversations; CPU %s", lib.Imported, ms(lib.ImportCPU)))
	t.add("export (session.Export + JSON)", ms(lib.Export), fmt.Sprintf("%.0f MB; CPU %s", float64(lib.ExportBytes)/1e6, ms(lib.ExportCPU)))
	for _, s := range lib.Search {
		t.add("search "+quote(s.Query)+" (session, first page of chats)", ms(s.Took), fmt.Sprintf("%d chats; CPU %s", s.Hits, ms(s.CPU)))
	}

	if o.libraryOnly {
		return nil
	}
	modes := []string{"headless"}
	display, stop := "", func() {}
	if o.window && !realWindow {
		t.note("window: this build has Fyne's \"ci\" tag (no OpenGL): measured headless only")
	}
	if o.window && realWindow {
		display, stop = findDisplay()
		defer stop()
		if display != "" {
			modes = append(modes, "window")
		} else {
			t.note("window: no $DISPLAY and no Xvfb: measured headless only")
		}
	}
	for _, mode := range modes {
		env := []string{"DISPLAY=" + display}
		e, err := runChild(o, env, mode, "start", empty, "")
		t.addChild(mode+": start-up to first frame, empty library", e, err, func(r result) string {
			return fmt.Sprintf("CPU %s (the window's thread %s); RSS %s", ms(r.StartCPU), ms(r.StartWindowCPU), mb(r.RSS))
		})
		full, err := runChild(o, env, mode, "start", db, LongTitle)
		t.addChild(mode+fmt.Sprintf(": start-up to first frame, %d chats", o.Convs+1), full, err, func(r result) string {
			s := fmt.Sprintf("CPU %s (the window's thread %s); RSS %s", ms(r.StartCPU), ms(r.StartWindowCPU), mb(r.RSS))
			if e.Start > 0 && e.StartCPU > 0 && e.StartWindowCPU > 0 {
				s += fmt.Sprintf("; %+.0f%% of empty (CPU %+.0f%%, the window's thread %+.0f%%)", 100*(float64(r.Start)/float64(e.Start)-1),
					100*(float64(r.StartCPU)/float64(e.StartCPU)-1), 100*(float64(r.StartWindowCPU)/float64(e.StartWindowCPU)-1))
			}
			return s
		})
		if o.Long > 0 {
			r, err := runChild(o, env, mode, "open", db, LongTitle)
			t.addChild(mode+fmt.Sprintf(": open the %d-message chat to first paint", o.Long), r, err, func(r result) string {
				return fmt.Sprintf("RSS +%s", mb(r.OpenRSS))
			})
			if r.Scroll.Frames > 0 {
				sc := r.Scroll
				what := mode + ": scroll it end to end, slowest step"
				if !sc.Done {
					what = mode + ": scroll it (cut short by the limit), slowest step"
				}
				more := fmt.Sprintf("%d steps, %s in all; median %s, 99th percentile %s, %d over %s", sc.Frames, ms(sc.All),
					ms(sc.StepP50), ms(sc.StepP99), sc.StepsOver, ms(frameBudget))
				if mode == "headless" {
					more += fmt.Sprintf("; painted (1 in %d, software): slowest %s", paintEvery, ms(sc.SlowestPainted))
				} else {
					more += " (each to its painted frame)"
				}
				t.add(what, ms(sc.Slowest), more)
				if sc.Turns > 0 {
					t.add(mode+": scroll, slowest turn of the window's goroutine", ms(sc.TurnSlowest),
						fmt.Sprintf("CPU %s; %d turns, %d over %s (%d in CPU time); most CPU of one %s",
							ms(sc.TurnSlowestCPU), sc.Turns, sc.TurnsOver, ms(frameBudget), sc.TurnsOverCPU, ms(sc.TurnMostCPU)))
				}
				t.add(mode+": RSS added by the open and the scroll", mb(r.ScrollRSS),
					fmt.Sprintf("%s once collected and returned; Go heap live after %s%s", mb(r.ScrollSettled), mb(r.ScrollLive), cHeap(r.ScrollC)))
				if len(sc.Mem) > 1 {
					t.add(mode+": RSS added along the scroll", mb(sc.Mem[len(sc.Mem)-1].RSS), memAlong(sc.Mem))
				}
				if mode == "window" {
					t.add(mode+fmt.Sprintf(": RSS added, idle %s after the scroll", idleFor().Round(time.Second)), mb(r.IdleRSS),
						"textures past their lifetime, the C heap trimmed"+cHeap(r.IdleC))
				}
			}
			if r.SidebarSearch != nil {
				for _, s := range r.SidebarSearch {
					t.add(mode+": sidebar search "+quote(s.Query)+" to rows painted", ms(s.Took),
						fmt.Sprintf("%d rows; CPU %s to the rows laid out, then %s painting them (in software)", s.Hits, ms(s.CPU), ms(s.PaintCPU)))
				}
			}
		}
	}
	return nil
}

// runChild measures in a new process: "start" or "open" on the database
// db, headless or in a window. One over the limit is killed.
func runChild(o options, env []string, mode, what, db, long string) (result, error) {
	exe, err := os.Executable()
	if err != nil {
		return result{}, err
	}
	// The child stops itself at the limit with what it measured; the
	// grace is for a step it cannot leave (the window busy in one call),
	// and for a window's idle after its scroll.
	ctx, cancel := context.WithTimeout(context.Background(), o.limit+20*time.Second+idleFor())
	defer cancel()
	args := []string{"child", "-mode", mode, "-what", what, "-db", db, "-home", filepath.Join(o.dir, "home-"+mode),
		"-long", long, "-limit", o.limit.String()}
	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.Env = append(os.Environ(), env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	// The child reports a line after each step: the last one says all it
	// measured, also when it was stopped.
	var r result
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	parsed := json.Unmarshal([]byte(lines[len(lines)-1]), &r) == nil
	if ctx.Err() != nil {
		return r, errLimit
	}
	if err != nil {
		return r, fmt.Errorf("%v: %s", err, lastLine(stderr.String()))
	}
	if !parsed {
		return r, fmt.Errorf("child said %q", out)
	}
	return r, nil
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

func quote(s string) string { return "“" + s + "”" }

// findDisplay returns $DISPLAY, or starts Xvfb on a free display and
// returns it with what stops it; "" when neither is there.
func findDisplay() (string, func()) {
	if d := os.Getenv("DISPLAY"); d != "" {
		return d, func() {}
	}
	xvfb, err := exec.LookPath("Xvfb")
	if err != nil {
		return "", func() {}
	}
	for n := 90; n < 100; n++ {
		if _, err := os.Stat(fmt.Sprintf("/tmp/.X11-unix/X%d", n)); err == nil {
			continue
		}
		d := fmt.Sprintf(":%d", n)
		cmd := exec.Command(xvfb, d, "-screen", "0", "1280x900x24", "-nolisten", "tcp")
		if err := cmd.Start(); err != nil {
			return "", func() {}
		}
		stop := func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }
		for range 100 {
			if _, err := os.Stat(fmt.Sprintf("/tmp/.X11-unix/X%d", n)); err == nil {
				return d, stop
			}
			time.Sleep(20 * time.Millisecond)
		}
		stop()
	}
	return "", func() {}
}
