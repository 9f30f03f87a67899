package settings

import (
	"fmt"
	"strconv"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/lang"
	"fyne.io/fyne/v2/widget"

	apiserve "github.com/churon/churon/app/api/serve"
	"github.com/churon/churon/ui/core"
)

// settingMaxAnswers is the session's cap on answers at once
// (session.SettingMaxAnswers; the window does not import the session).
const settingMaxAnswers = "session.max_answers"

// serverPanel turns the OpenAI-compatible API server on and off and says
// what it does: where it listens, the requests it answers, the last
// requests' records.
type serverPanel struct {
	w                      *core.Window
	enabled, store, logged *widget.Check
	addr, key, cors        *widget.Entry
	maxAnswers             *widget.Entry
	state                  *widget.Label
	requests               *widget.Label
	content                fyne.CanvasObject
}

func newServerPanel(w *core.Window) *serverPanel {
	p := &serverPanel{w: w}
	cfg, on := apiserve.ConfigFrom(w.Setting)
	p.enabled = widget.NewCheck(lang.X("settings.api.enable", "Serve the loaded model to other programs"), nil)
	p.enabled.SetChecked(on)
	p.addr = widget.NewEntry()
	p.addr.SetPlaceHolder(apiserve.DefaultAddr)
	p.addr.SetText(cfg.Addr)
	p.key = widget.NewPasswordEntry()
	p.key.SetPlaceHolder(lang.X("settings.api.key.none", "none"))
	p.key.SetText(cfg.APIKey)
	p.cors = widget.NewEntry()
	p.cors.SetPlaceHolder("http://localhost:3000")
	p.cors.SetText(strings.Join(cfg.CORSOrigins, ", "))
	p.store = widget.NewCheck(lang.X("settings.api.store", "Keep the requests in the history, as chats"), nil)
	p.store.SetChecked(cfg.Store)
	p.logged = widget.NewCheck(lang.X("settings.api.log", "Record each request (tokens, cache, speed)"), nil)
	p.logged.SetChecked(cfg.Log)
	p.maxAnswers = widget.NewEntry()
	p.maxAnswers.SetText("0")
	if v, ok := w.Setting(settingMaxAnswers); ok && strings.TrimSpace(v) != "" {
		p.maxAnswers.SetText(strings.TrimSpace(v))
	}
	p.state = wrapped("")
	p.requests = wrapped("")
	p.requests.TextStyle.Monospace = true
	p.refresh()
	form := widget.NewForm(
		&widget.FormItem{Text: lang.X("settings.api", "OpenAI-compatible API"), Widget: p.enabled,
			HintText: lang.X("settings.api.hint", "Editors, agents and scripts use the model at the address below, as they use OpenAI's")},
		&widget.FormItem{Text: lang.X("settings.api.addr", "Address"), Widget: p.addr,
			HintText: lang.X("settings.api.addr.hint", "Only this computer by default; another address needs an API key")},
		&widget.FormItem{Text: lang.X("settings.api.key", "API key"), Widget: p.key,
			HintText: lang.X("settings.api.key.hint", "When set, clients must send it (Authorization: Bearer)")},
		&widget.FormItem{Text: lang.X("settings.api.cors", "Web pages allowed"), Widget: p.cors,
			HintText: lang.X("settings.api.cors.hint", "Origins that may call the API from a browser, comma-separated; none by default")},
		&widget.FormItem{Text: lang.X("settings.api.history", "History"), Widget: p.store},
		&widget.FormItem{Text: lang.X("settings.api.records", "Records"), Widget: p.logged},
		&widget.FormItem{Text: lang.X("settings.api.max", "Answers at once"), Widget: p.maxAnswers,
			HintText: lang.X("settings.api.max.hint", "Chats and requests generated together; the rest wait. 0 = from memory")},
		&widget.FormItem{Text: lang.X("settings.api.state", "Now"), Widget: p.state},
	)
	p.content = container.NewVBox(form, p.requests)
	return p
}

// refresh shows the server's state, its requests and its latest records.
func (p *serverPanel) refresh() {
	st := p.w.Server.Status()
	switch {
	case st.On:
		p.state.SetText(lang.X("settings.api.on", "On at {{.URL}} · {{.N}} answering, {{.Served}} served",
			map[string]any{"URL": st.URL, "N": len(st.Active), "Served": st.Served}))
	case st.Err != "":
		p.state.SetText(lang.X("settings.api.failed", "Off: {{.Err}}", map[string]any{"Err": st.Err}))
	default:
		p.state.SetText(lang.X("settings.api.off", "Off"))
	}
	var lines []string
	for _, r := range st.Active {
		lines = append(lines, fmt.Sprintf("▶ %s %s %s · %d tokens", r.Started.Format("15:04:05"), r.Client, r.Path, r.Tokens))
	}
	for i := len(st.Log) - 1; i >= 0 && i >= len(st.Log)-8; i-- {
		lines = append(lines, formatRecord(st.Log[i]))
	}
	p.requests.SetText(strings.Join(lines, "\n"))
}

// formatRecord is one request's record on a line.
func formatRecord(e apiserve.LogEntry) string {
	s := fmt.Sprintf("%s %s %d", e.Time.Format("15:04:05"), e.Path, e.Status)
	if e.PromptTokens > 0 {
		s += fmt.Sprintf(" · in %d (cached %d) out %d", e.PromptTokens, e.CachedTokens, e.CompletionTokens)
	}
	if e.TTFT > 0 {
		s += fmt.Sprintf(" · TTFT %d ms", e.TTFT.Milliseconds())
	}
	if e.TokensPerSecond > 0 {
		s += fmt.Sprintf(" · %.1f tok/s", e.TokensPerSecond)
	}
	if e.Err != "" {
		s += " · " + e.Err
	}
	return s
}

// config is the form's configuration.
func (p *serverPanel) config() apiserve.Config {
	cfg := apiserve.Config{Addr: strings.TrimSpace(p.addr.Text), APIKey: strings.TrimSpace(p.key.Text),
		Store: p.store.Checked, Log: p.logged.Checked}
	for _, o := range strings.Split(p.cors.Text, ",") {
		if o = strings.TrimSpace(o); o != "" {
			cfg.CORSOrigins = append(cfg.CORSOrigins, o)
		}
	}
	return cfg
}

// save keeps the form in the settings and starts, restarts or stops the
// server to match (off Fyne's goroutine: a start binds a port).
func (p *serverPanel) save() {
	w := p.w
	cfg := p.config()
	old, wasOn := apiserve.ConfigFrom(w.Setting)
	for key, v := range map[string]string{
		apiserve.SettingEnabled: strconv.FormatBool(p.enabled.Checked),
		apiserve.SettingAddr:    cfg.Addr,
		apiserve.SettingAPIKey:  cfg.APIKey,
		apiserve.SettingCORS:    strings.Join(cfg.CORSOrigins, ","),
		apiserve.SettingStore:   strconv.FormatBool(cfg.Store),
		apiserve.SettingLog:     strconv.FormatBool(cfg.Log),
	} {
		if cur, _ := w.Setting(key); cur != v {
			w.SetSetting(key, v)
		}
	}
	if n, err := strconv.Atoi(strings.TrimSpace(p.maxAnswers.Text)); err != nil || n < 0 {
		w.ShowError(fmt.Errorf("%s: %q %s", lang.X("settings.api.max", "Answers at once"), p.maxAnswers.Text, lang.X("settings.notinteger", "is not a whole number")))
	} else if cur, _ := w.Setting(settingMaxAnswers); cur != strconv.Itoa(n) && !(cur == "" && n == 0) {
		w.SetSetting(settingMaxAnswers, strconv.Itoa(n))
	}
	srv, on := w.Server, p.enabled.Checked
	changed := on != wasOn || fmt.Sprint(old) != fmt.Sprint(cfg) || on && !srv.Status().On
	if !changed {
		return
	}
	w.Commands.Run(func() error {
		if !on {
			return srv.Stop()
		}
		return srv.Start(cfg)
	}, w.ShowError)
}
