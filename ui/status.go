package ui

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/lang"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	apiserve "github.com/churon/churon/app/api/serve"
	"github.com/churon/churon/app/api/session"
	"github.com/churon/churon/internal/units"
	"github.com/churon/churon/ui/core"
)

// statusLine shows the loaded model and quantization, the backend that
// runs it, memory use and where the open conversation's KV cache is;
// while an answer streams, its speed.
type statusLine struct {
	ui      *UI
	left    *widget.Label
	right   *widget.Label
	server  *widget.Label // the API server, when on
	content fyne.CanvasObject
	cache   *session.CacheState // of the open conversation; nil: none to show
}

func newStatusLine(u *UI) *statusLine {
	s := &statusLine{ui: u}
	s.left = widget.NewLabel("")
	s.left.SizeName = theme.SizeNameCaptionText
	s.left.Truncation = fyne.TextTruncateEllipsis
	s.right = widget.NewLabel("")
	s.right.SizeName = theme.SizeNameCaptionText
	s.server = widget.NewLabel("")
	s.server.SizeName = theme.SizeNameCaptionText
	s.server.Hide()
	s.content = container.NewBorder(nil, nil, nil, container.NewHBox(s.server, s.right), s.left)
	if srv := u.w.Server; srv != nil {
		// The server says when it starts, stops, takes or ends a request.
		go func() {
			for {
				select {
				case <-u.w.Ctx.Done():
					return
				case <-srv.Changed():
					u.w.Do(s.refreshServer)
				}
			}
		}()
		s.refreshServer()
	}
	return s
}

// refreshServer shows whether the API server is on, where, and the
// requests it answers now (or why it could not start).
func (s *statusLine) refreshServer() {
	srv := s.ui.w.Server
	if srv == nil {
		return
	}
	st := srv.Status()
	text := serverText(st)
	s.server.SetText(text)
	if text == "" {
		s.server.Hide()
	} else {
		s.server.Show()
	}
}

// serverText is the status line's words for the API server ("": off,
// without an error to tell).
func serverText(st apiserve.Status) string {
	switch {
	case st.On && len(st.Active) > 0:
		return lang.X("status.api.busy", "API {{.URL}} · answering {{.N}}", map[string]any{"URL": st.URL, "N": len(st.Active)})
	case st.On:
		return lang.X("status.api.on", "API {{.URL}}", map[string]any{"URL": st.URL})
	case st.Err != "":
		return lang.X("status.api.failed", "API off: {{.Err}}", map[string]any{"Err": st.Err})
	}
	return ""
}

func (s *statusLine) refresh() {
	u := s.ui
	var parts []string
	switch {
	case u.w.Model != nil:
		m := u.w.Model
		name := core.ModelLabel(m.Path)
		remote := session.IsRemote(m.Path)
		if m.Name != "" && !remote && !strings.EqualFold(m.Name, m.Arch) && !strings.EqualFold(m.Name, name) {
			name += " (" + m.Name + ")"
		}
		parts = append(parts, name)
		if m.Quant != "" {
			parts = append(parts, m.Quant)
		}
		if b := deviceSummary(m); b != "" {
			parts = append(parts, b)
		}
		if !remote { // a remote model's weights and caches are the server's
			parts = append(parts, lang.X("status.weights", "weights {{.Size}}", map[string]any{"Size": units.Bytes(m.WeightBytes)}))
		}
	case u.w.LoadingPath != "":
		parts = append(parts, lang.X("status.loading", "Loading {{.Name}}… {{.Pct}}%",
			map[string]any{"Name": core.ModelLabel(u.w.LoadingPath), "Pct": int(u.w.LoadProgress * 100)}))
	default:
		parts = append(parts, lang.X("status.nomodel", "No model loaded"))
	}
	if rss := residentBytes(); rss > 0 {
		parts = append(parts, lang.X("status.memory", "memory {{.Size}}", map[string]any{"Size": units.Bytes(rss)}))
	}
	if c := s.cache; c != nil && c.Conv == u.w.Conv && u.w.Conv != 0 && (u.w.Model == nil || !session.IsRemote(u.w.Model.Path)) {
		parts = append(parts, cacheText(*c))
	}
	s.left.SetText(strings.Join(parts, "  ·  "))
}

// deviceSummary says what runs the model: the accelerator and its share
// ("CUDA · NVIDIA GeForce RTX 4070 (sm_89, driver 550.54) · 28/28
// layers"), or the CPU and, when a GPU backend could not be used, why
// ("CPU avx2 (8 threads) — no NVIDIA driver found: libcuda.so.1: …").
func deviceSummary(m *core.ModelInfo) string {
	if m.Accelerator != "" {
		s := m.Accelerator + " · " + lang.X("status.layers", "{{.N}}/{{.Of}} layers", map[string]any{"N": m.OffloadedLayers, "Of": m.Layers})
		if m.OffloadedLayers < m.Layers || !m.OffloadedOutput {
			s += " " + lang.X("status.layers.rest", "(the rest on the CPU)")
		}
		return s
	}
	b := m.Backend
	if b == "" {
		return ""
	}
	if m.Threads > 0 && !strings.Contains(b, "thread") {
		b += " · " + lang.X("status.threads", "{{.N}} threads", map[string]any{"N": m.Threads})
	}
	if len(m.DeviceNotes) > 0 {
		// "cuda: no NVIDIA driver found: …": the backend's reason, first.
		note := m.DeviceNotes[len(m.DeviceNotes)-1]
		if prefix, why, ok := strings.Cut(note, ": "); ok && !strings.Contains(prefix, " ") {
			note = why
		}
		b += " — " + headline(note)
	}
	return b
}

// headline is a reason's first clause: "no NVIDIA GPU found (cuInit:
// CUDA_ERROR_NO_DEVICE (…))" says "no NVIDIA GPU found". The status line
// has room for what happened; the chain behind it is in Settings' GPU
// notes and `churon devices`.
func headline(note string) string {
	head, _, cut := strings.Cut(note, ": ")
	if !cut {
		return note
	}
	// A clause opened before the colon and not closed is the detail's.
	depth, open := 0, -1
	for i, r := range head {
		switch r {
		case '(':
			if depth == 0 {
				open = i
			}
			depth++
		case ')':
			depth--
		}
	}
	if depth > 0 && open > 0 {
		head = head[:open]
	}
	return strings.TrimRight(head, " ;,")
}

// cacheText says where a conversation's KV cache is: in RAM, a follow-up
// costs only its own tokens; on disk, it is read back first; with none,
// the whole conversation is processed again.
func cacheText(c session.CacheState) string {
	args := map[string]any{"N": c.Tokens, "Size": units.Bytes(c.Bytes)}
	switch c.Where {
	case session.CacheRAM:
		return lang.X("status.cache.ram", "cache: {{.N}} tokens in memory", args)
	case session.CacheDisk:
		return lang.X("status.cache.disk", "cache: {{.N}} tokens on disk", args)
	}
	return lang.X("status.cache.none", "cache: none")
}

// onCache records a conversation's cache state (an event).
func (s *statusLine) onCache(c session.CacheState) {
	if c.Conv != s.ui.w.Conv {
		return
	}
	s.cache = &c
	s.refresh()
}

// showCache asks where conv's cache is, for a conversation just opened.
// The question goes to the session's scheduler, which a write stuck on a
// slow disk may hold: it is asked off Fyne's goroutine.
func (s *statusLine) showCache(conv int64) {
	s.cache = nil
	s.refresh()
	if conv == 0 {
		return
	}
	w := s.ui.w
	sess := w.Session
	go func() {
		c, err := sess.CacheState(conv)
		w.Do(func() {
			if err == nil && w.Conv == conv && s.cache == nil {
				s.cache = &c
				s.refresh()
			}
		})
	}()
}

func (s *statusLine) onToken(t session.Token) {
	if t.Elapsed > 0 && t.Tokens > 0 {
		s.right.SetText(fmt.Sprintf("%.1f tok/s", float64(t.Tokens)/t.Elapsed.Seconds()))
	}
}

func (s *statusLine) onDone() {
	s.right.SetText("")
	s.refresh()
}

// residentBytes is the process's resident memory: on Linux from
// /proc/self/statm (which counts the mapped model pages in use), elsewhere
// what the Go runtime holds.
func residentBytes() int64 {
	if b, err := os.ReadFile("/proc/self/statm"); err == nil {
		f := strings.Fields(string(b))
		if len(f) >= 2 {
			if pages, err := strconv.ParseInt(f[1], 10, 64); err == nil {
				return pages * int64(os.Getpagesize())
			}
		}
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.Sys)
}

// formatBytes is units.Bytes under the name the views use.
var formatBytes = units.Bytes
