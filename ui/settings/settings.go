package settings

import (
	"fmt"
	"strconv"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/lang"
	"fyne.io/fyne/v2/widget"

	"github.com/churon/churon/app/api/session"
	"github.com/churon/churon/ui/core"
	"github.com/churon/churon/ui/locale"
)

// A preset is a named set of sampler values.
type preset struct {
	Key, Name string
	Apply     func(*session.Settings)
}

// presets are offered in the settings panel. Balanced is llama.cpp's
// default chain; Precise narrows it for facts and code; Creative widens it
// for stories.
func presets() []preset {
	return []preset{
		{"precise", lang.X("preset.precise", "Precise"), func(s *session.Settings) {
			s.Temperature, s.TopK, s.TopP, s.MinP, s.RepeatPenalty = 0.2, 20, 0.9, 0.1, 1.1
		}},
		{"balanced", lang.X("preset.balanced", "Balanced"), func(s *session.Settings) {
			s.Temperature, s.TopK, s.TopP, s.MinP, s.RepeatPenalty = 0.8, 40, 0.95, 0.05, 1.1
		}},
		{"creative", lang.X("preset.creative", "Creative"), func(s *session.Settings) {
			s.Temperature, s.TopK, s.TopP, s.MinP, s.RepeatPenalty = 1.1, 100, 0.98, 0.02, 1.05
		}},
	}
}

// settingsPanel edits one conversation's settings (or the new chat's,
// before its first message) and the app's language.
type settingsPanel struct {
	w   *core.Window
	cur session.Settings

	system                         *widget.Entry
	preset                         *widget.Select
	temp, topP, topK, minP, repeat *widget.Entry
	maxTokens, context, seed       *widget.Entry
	overflow                       *widget.Select
	thinking                       *widget.Check // nil: the model has no switch
	kvBudget                       *widget.Entry
	kvDisk                         *widget.Label
	kvDiskBudget                   *widget.Entry
	language                       *widget.Select
	languageCodes, languageNames   []string
	theme                          *widget.Select
	reloadLast                     *widget.Check
	server                         *serverPanel // nil: no server in this window
	remote                         *remotePanel // nil: no remote engines in this window
	gpu                            *widget.Select
	gpuLayers                      *widget.Entry
	content                        fyne.CanvasObject
}

// Show opens the settings dialog.
func Show(w *core.Window) {
	p := newSettingsPanel(w)
	d := dialog.NewCustomConfirm(lang.X("settings.title", "Settings"), lang.X("dialog.save", "Save"), lang.X("dialog.cancel", "Cancel"),
		p.content, func(ok bool) {
			if ok {
				p.onSave()
			}
		}, w.Win)
	d.Resize(fyne.NewSize(700, 640)) // Fyne makes it smaller in a smaller window
	d.Show()
}

func newSettingsPanel(w *core.Window) *settingsPanel {
	p := &settingsPanel{w: w}
	p.cur = p.w.Session.DefaultSettings()
	switch {
	case w.Conv != 0:
		if s, err := w.Session.Settings(w.Conv); err == nil {
			p.cur = s
		} else {
			w.ShowError(err)
		}
	case w.PendingSettings != nil:
		p.cur = *w.PendingSettings
	}

	p.system = widget.NewMultiLineEntry()
	p.system.Wrapping = fyne.TextWrapWord
	p.system.SetMinRowsVisible(3)
	p.system.SetPlaceHolder(lang.X("settings.system.hint", "e.g. You are a concise assistant. Answer in Korean."))
	p.system.SetText(p.cur.SystemPrompt)

	num := func(v string) *widget.Entry {
		e := widget.NewEntry()
		// Without its own scroller (a short number needs none) the field
		// lets the mouse wheel through to the page's: Fyne gives the wheel
		// to the innermost scroller under the pointer, and an entry's
		// swallows it even when it has nothing to scroll.
		e.Wrapping, e.Scroll = fyne.TextWrapOff, fyne.ScrollNone
		e.SetText(v)
		return e
	}
	p.temp = num(formatFloat(p.cur.Temperature))
	p.topP = num(formatFloat(p.cur.TopP))
	p.topK = num(strconv.Itoa(p.cur.TopK))
	p.minP = num(formatFloat(p.cur.MinP))
	p.repeat = num(formatFloat(p.cur.RepeatPenalty))
	p.maxTokens = num(strconv.Itoa(p.cur.MaxTokens))
	p.context = num(strconv.Itoa(p.cur.Context))
	p.seed = num(strconv.FormatInt(p.cur.Seed, 10))
	p.overflow = widget.NewSelect(overflowNames(), nil)
	p.overflow.SetSelectedIndex(0)
	if p.cur.Overflow == session.OverflowStop {
		p.overflow.SetSelectedIndex(1)
	}
	budget, set := w.Session.KVBudget()
	p.kvBudget = num("0")
	if set {
		p.kvBudget.SetText(strconv.FormatInt(budget>>20, 10))
	}
	auto := budget
	if set {
		auto = session.DefaultKVBudget()
	}
	diskBudget, diskSet := w.Session.KVDiskBudget()
	p.kvDiskBudget = num("0")
	if diskSet {
		p.kvDiskBudget.SetText(strconv.FormatInt(diskBudget>>20, 10))
	}
	p.kvDisk = widget.NewLabel("")
	p.refreshKVDisk()
	clearKV := widget.NewButton(lang.X("settings.kvdisk.clear", "Clear"), p.onClearKV)

	presets := presets()
	var names []string
	for _, pr := range presets {
		names = append(names, pr.Name)
	}
	p.preset = widget.NewSelect(names, func(name string) {
		for _, pr := range presets {
			if pr.Name == name {
				s := p.cur
				pr.Apply(&s)
				p.temp.SetText(formatFloat(s.Temperature))
				p.topK.SetText(strconv.Itoa(s.TopK))
				p.topP.SetText(formatFloat(s.TopP))
				p.minP.SetText(formatFloat(s.MinP))
				p.repeat.SetText(formatFloat(s.RepeatPenalty))
			}
		}
	})
	p.preset.PlaceHolder = lang.X("settings.preset.choose", "Choose a preset")

	hint := func(e *widget.Entry, h string) *widget.FormItem {
		return &widget.FormItem{Widget: e, HintText: h}
	}
	chat := widget.NewForm()
	p.addThinking(chat)
	chat.Items = append(chat.Items,
		&widget.FormItem{Text: lang.X("settings.system", "System prompt"), Widget: p.system},
		&widget.FormItem{Text: lang.X("settings.preset", "Preset"), Widget: p.preset},
		named(hint(p.temp, lang.X("settings.temp.hint", "0 = always the likeliest word; higher = more varied")), lang.X("settings.temp", "Temperature")),
		named(hint(p.topP, lang.X("settings.topp.hint", "0–1; 1 turns it off")), "Top-p"),
		named(hint(p.topK, lang.X("settings.topk.hint", "0 turns it off")), "Top-k"),
		named(hint(p.minP, lang.X("settings.minp.hint", "0–1; 0 turns it off")), "Min-p"),
		named(hint(p.repeat, lang.X("settings.repeat.hint", "1 turns it off")), lang.X("settings.repeat", "Repeat penalty")),
		named(hint(p.maxTokens, lang.X("settings.max.hint", "0 = until the model stops")), lang.X("settings.max", "Max tokens")),
		named(hint(p.context, lang.X("settings.context.hint", "0 = the model's own, at most 4096")), lang.X("settings.context", "Context length")),
		named(hint(p.seed, lang.X("settings.seed.hint", "-1 = a new random seed each time")), lang.X("settings.seed", "Seed")),
		&widget.FormItem{Text: lang.X("settings.overflow", "When the chat outgrows the context"), Widget: p.overflow,
			HintText: lang.X("settings.overflow.hint", "Dropped turns stay in the chat; the model no longer sees them")},
	)

	p.languageNames = []string{lang.X("settings.language.system", "Same as the system")}
	p.languageCodes = []string{""}
	for _, l := range locale.Supported {
		p.languageNames = append(p.languageNames, l.Name)
		p.languageCodes = append(p.languageCodes, l.Code)
	}
	p.language = widget.NewSelect(p.languageNames, nil)
	cur, _ := w.Setting(core.SettingLanguage)
	for i, c := range p.languageCodes {
		if c == cur {
			p.language.SetSelectedIndex(i)
		}
	}
	p.theme = widget.NewSelect(themeNames(), nil)
	p.theme.SetSelectedIndex(0)
	curTheme, _ := w.Setting(core.SettingTheme)
	for i, c := range themeChoices {
		if c == curTheme {
			p.theme.SetSelectedIndex(i)
		}
	}
	p.gpu, p.gpuLayers = gpuChoice(w, num)
	p.reloadLast = widget.NewCheck(lang.X("settings.reload", "Load the last model again"), nil)
	p.reloadLast.SetChecked(w.ReloadLast())
	app := widget.NewForm(
		&widget.FormItem{Text: lang.X("settings.language", "Language"), Widget: p.language},
		&widget.FormItem{Text: lang.X("settings.theme", "Theme"), Widget: p.theme},
		&widget.FormItem{Text: lang.X("settings.startup", "At start"), Widget: p.reloadLast},
		&widget.FormItem{Text: lang.X("settings.kvbudget", "Memory for chat caches (MiB)"), Widget: p.kvBudget,
			HintText: lang.X("settings.kvbudget.hint", "Idle chats keep their KV cache in memory up to this; 0 = automatic ({{.Auto}})",
				map[string]any{"Auto": core.FormatBytes(auto)})},
		&widget.FormItem{Text: lang.X("settings.kvdisk", "Chat caches on disk"), Widget: container.NewBorder(nil, nil, nil, clearKV, p.kvDisk),
			HintText: lang.X("settings.kvdisk.hint", "Saved so an old chat resumes without re-reading its history")},
		&widget.FormItem{Text: lang.X("settings.kvdiskbudget", "Disk for chat caches (MiB)"), Widget: p.kvDiskBudget,
			HintText: lang.X("settings.kvdiskbudget.hint", "The least recently used caches are deleted beyond this; 0 = {{.Default}}",
				map[string]any{"Default": core.FormatBytes(session.DefaultKVDiskBudget)})},
		&widget.FormItem{Text: lang.X("settings.devices", "Runs on"), Widget: devicesView(w.Model),
			HintText: lang.X("settings.devices.hint", "Where the loaded model runs, and why a GPU is not used")},
		&widget.FormItem{Text: lang.X("settings.gpu", "GPU"), Widget: container.NewBorder(nil, nil, nil, p.gpuLayers, p.gpu),
			HintText: lang.X("settings.gpu.hint", "From the next model load: as many layers on the GPU as fit, none, or this many")},
	)
	chatTitle := lang.X("settings.tab.chat", "This chat")
	if w.Conv == 0 {
		chatTitle = lang.X("settings.tab.newchat", "New chat")
	}
	// Each tab scrolls as a whole, so the dialog fits any window.
	tabs := container.NewAppTabs(
		container.NewTabItem(chatTitle, container.NewVScroll(chat)),
		container.NewTabItem(lang.X("settings.tab.app", "App"), container.NewVScroll(app)),
	)
	if w.Server != nil {
		p.server = newServerPanel(w)
		tabs.Append(container.NewTabItem(lang.X("settings.tab.api", "API server"), container.NewVScroll(p.server.content)))
	}
	if w.Remotes != nil {
		p.remote = newRemotePanel(w)
		tabs.Append(container.NewTabItem(lang.X("settings.tab.remote", "Remote engines"), container.NewVScroll(p.remote.content)))
	}
	p.content = tabs
	return p
}

// addThinking offers the chat's thinking switch, first, when the loaded
// model has one (Qwen3's enable_thinking): on, it reasons before it
// answers; off, it answers at once.
func (p *settingsPanel) addThinking(f *widget.Form) {
	if m := p.w.Model; m == nil || !m.ThinkingSwitch {
		return
	}
	p.thinking = widget.NewCheck(lang.X("settings.thinking.on", "Think before answering"), nil)
	p.thinking.SetChecked(!p.cur.ThinkingOff)
	f.Items = append(f.Items, &widget.FormItem{Text: lang.X("settings.thinking", "Thinking"), Widget: p.thinking,
		HintText: lang.X("settings.thinking.hint", "Off: the model answers at once, without reasoning first")})
}

// devicesView says where the loaded model runs and, a line each, why an
// accelerator is not used.
func devicesView(m *core.ModelInfo) fyne.CanvasObject {
	if m == nil {
		return widget.NewLabel(lang.X("status.nomodel", "No model loaded"))
	}
	box := container.NewVBox(wrapped(m.Backend))
	for _, n := range m.DeviceNotes {
		l := wrapped(n)
		l.Importance = widget.LowImportance
		box.Add(l)
	}
	return box
}

func wrapped(s string) *widget.Label {
	l := widget.NewLabel(s)
	l.Wrapping = fyne.TextWrapWord
	return l
}

// overflowNames are the choices of the overflow select, in the order of
// overflowPolicies.
func overflowNames() []string {
	return []string{
		lang.X("settings.overflow.drop", "Drop the oldest turns"),
		lang.X("settings.overflow.stop", "Stop and say so"),
	}
}

var overflowPolicies = []session.Overflow{session.OverflowDrop, session.OverflowStop}

// themeNames are the choices of the theme select, in the order of
// themeChoices.
func themeNames() []string {
	return []string{
		lang.X("settings.theme.system", "Light or dark, following the system"),
		lang.X("settings.theme.light", "Light"),
		lang.X("settings.theme.dark", "Dark"),
	}
}

var themeChoices = []string{core.ThemeSystem, core.ThemeLight, core.ThemeDark}

func (p *settingsPanel) refreshKVDisk() {
	files, bytes := p.w.Session.KVDiskUsage()
	p.kvDisk.SetText(lang.X("settings.kvdisk.usage", "{{.Size}} in {{.N}} files", map[string]any{"Size": core.FormatBytes(bytes), "N": files}))
}

func (p *settingsPanel) onClearKV() {
	sess := p.w.Session
	core.Then(p.w.Commands, func() (struct{}, error) { return struct{}{}, sess.ClearKVDisk() }, func(_ struct{}, err error) {
		if err != nil {
			p.w.ShowError(err)
		}
		p.refreshKVDisk()
	})
}

func named(fi *widget.FormItem, text string) *widget.FormItem {
	fi.Text = text
	return fi
}

func formatFloat(f float32) string {
	return strconv.FormatFloat(float64(f), 'g', 4, 32)
}

// values reads the form into settings, or says which field is wrong.
func (p *settingsPanel) values() (session.Settings, error) {
	s := p.cur
	s.SystemPrompt = strings.TrimSpace(p.system.Text)
	var err error
	f32 := func(e *widget.Entry, name string, dst *float32) {
		if err != nil {
			return
		}
		v, e2 := strconv.ParseFloat(strings.TrimSpace(e.Text), 32)
		if e2 != nil {
			err = fmt.Errorf("%s: %q %s", name, e.Text, lang.X("settings.notnumber", "is not a number"))
			return
		}
		*dst = float32(v)
	}
	i := func(e *widget.Entry, name string, dst *int) {
		if err != nil {
			return
		}
		v, e2 := strconv.Atoi(strings.TrimSpace(e.Text))
		if e2 != nil {
			err = fmt.Errorf("%s: %q %s", name, e.Text, lang.X("settings.notinteger", "is not a whole number"))
			return
		}
		*dst = v
	}
	f32(p.temp, lang.X("settings.temp", "Temperature"), &s.Temperature)
	f32(p.topP, "Top-p", &s.TopP)
	i(p.topK, "Top-k", &s.TopK)
	f32(p.minP, "Min-p", &s.MinP)
	f32(p.repeat, lang.X("settings.repeat", "Repeat penalty"), &s.RepeatPenalty)
	i(p.maxTokens, lang.X("settings.max", "Max tokens"), &s.MaxTokens)
	i(p.context, lang.X("settings.context", "Context length"), &s.Context)
	if err == nil {
		seed, e2 := strconv.ParseInt(strings.TrimSpace(p.seed.Text), 10, 64)
		if e2 != nil {
			err = fmt.Errorf("%s: %q %s", lang.X("settings.seed", "Seed"), p.seed.Text, lang.X("settings.notinteger", "is not a whole number"))
		}
		s.Seed = seed
	}
	if err != nil {
		return s, err
	}
	if i := p.overflow.SelectedIndex(); i >= 0 && i < len(overflowPolicies) {
		s.Overflow = overflowPolicies[i]
	}
	if p.thinking != nil {
		s.ThinkingOff = !p.thinking.Checked
	}
	return s, p.w.Session.CheckSettings(s)
}

// mebibytes reads a cache budget field in MiB: bytes, 0 for automatic.
func mebibytes(e *widget.Entry, label string) (int64, error) {
	v, err := strconv.ParseInt(strings.TrimSpace(e.Text), 10, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("%s: %q %s", label, e.Text, lang.X("settings.notinteger", "is not a whole number"))
	}
	return v << 20, nil
}

func (p *settingsPanel) onSave() {
	w := p.w
	s, err := p.values()
	if err != nil {
		w.ShowError(err)
		return
	}
	budget, err := mebibytes(p.kvBudget, lang.X("settings.kvbudget", "Memory for chat caches (MiB)"))
	if err != nil {
		w.ShowError(err)
		return
	}
	diskBudget, err := mebibytes(p.kvDiskBudget, lang.X("settings.kvdiskbudget", "Disk for chat caches (MiB)"))
	if err != nil {
		w.ShowError(err)
		return
	}
	// The writes run on the command worker, in this order.
	sess := w.Session
	if conv := w.Conv; conv != 0 {
		w.Commands.Run(func() error { return sess.SetSettings(conv, s) }, w.ShowError)
	} else {
		w.PendingSettings = &s
	}
	if cur, set := sess.KVBudget(); (set && cur != budget) || (!set && budget != 0) {
		w.Commands.Run(func() error { return sess.SetKVBudget(budget) }, w.ShowError)
	}
	if cur, set := sess.KVDiskBudget(); (set && cur != diskBudget) || (!set && diskBudget != 0) {
		core.Then(w.Commands, func() (struct{}, error) { return struct{}{}, sess.SetKVDiskBudget(diskBudget) }, func(_ struct{}, err error) {
			if err != nil {
				w.ShowError(err)
			}
			p.refreshKVDisk()
		})
	}
	if i := p.theme.SelectedIndex(); i >= 0 && i < len(themeChoices) {
		if cur, _ := w.Setting(core.SettingTheme); themeChoices[i] != cur {
			w.SetSetting(core.SettingTheme, themeChoices[i])
			core.SetTheme(w.App, themeChoices[i])
		}
	}
	if v, err := p.gpuValue(); err != nil {
		w.ShowError(err)
	} else if cur, _ := w.Setting(session.SettingGPU); v != cur {
		w.SetSetting(session.SettingGPU, v)
	}
	if p.reloadLast.Checked != w.ReloadLast() {
		w.SetSetting(core.SettingReloadLast, strconv.FormatBool(p.reloadLast.Checked))
	}
	if p.server != nil {
		p.server.save()
	}
	if i := p.language.SelectedIndex(); i >= 0 {
		code := p.languageCodes[i]
		cur, _ := w.Setting(core.SettingLanguage)
		if code != cur {
			w.SetLanguage(code)
		}
	}
}

// gpuChoice makes the GPU setting's widgets: Auto, CPU only, or a number
// of layers (llama.cpp's -ngl), shown as the setting holds it now.
func gpuChoice(w *core.Window, num func(string) *widget.Entry) (*widget.Select, *widget.Entry) {
	layers := num("")
	layers.SetPlaceHolder(lang.X("settings.gpu.layers.hint", "layers"))
	sel := widget.NewSelect([]string{
		lang.X("settings.gpu.auto", "Auto"),
		lang.X("settings.gpu.cpu", "CPU only"),
		lang.X("settings.gpu.layers", "GPU layers:"),
	}, func(string) {})
	sel.OnChanged = func(string) {
		if sel.SelectedIndex() == 2 {
			layers.Enable()
		} else {
			layers.Disable()
		}
	}
	cur, _ := w.Setting(session.SettingGPU)
	cpu, n, err := session.ParseGPU(cur)
	switch {
	case err == nil && cpu:
		sel.SetSelectedIndex(1)
	case err == nil && n > 0:
		layers.SetText(strconv.Itoa(n))
		sel.SetSelectedIndex(2)
	default:
		sel.SetSelectedIndex(0)
	}
	return sel, layers
}

// gpuValue is the GPU setting the widgets say.
func (p *settingsPanel) gpuValue() (string, error) {
	switch p.gpu.SelectedIndex() {
	case 1:
		return "cpu", nil
	case 2:
		n, err := strconv.Atoi(strings.TrimSpace(p.gpuLayers.Text))
		if err != nil || n <= 0 {
			return "", fmt.Errorf("%s: %s", lang.X("settings.gpu", "GPU"),
				lang.X("settings.gpu.bad", "the number of layers must be a whole number above 0"))
		}
		return strconv.Itoa(n), nil
	}
	return "auto", nil
}
