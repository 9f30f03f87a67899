package settings

import (
	"image/color"
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/churon/churon/app/api/session"
	"github.com/churon/churon/app/kvcache"
	"github.com/churon/churon/internal/testutil"
	"github.com/churon/churon/internal/uitest"
	"github.com/churon/churon/ui/core"
)

// TestSettingsPresetsApply sets a preset and a system prompt for a new chat
// and checks the conversation gets them when its first message is sent.
func TestSettingsPresetsApply(t *testing.T) {
	h := uitest.NewWindow(t, uitest.Options{})
	h.Load(uitest.StoriesPath(t))
	p := newSettingsPanel(h.Core)
	p.preset.SetSelected("Precise")
	if p.temp.Text != "0.2" || p.topK.Text != "20" {
		t.Fatalf("Precise preset: temperature %q top-k %q", p.temp.Text, p.topK.Text)
	}
	p.system.SetText("You tell short stories.")
	p.maxTokens.SetText("8")
	p.onSave()
	if h.Core.PendingSettings == nil {
		t.Fatal("settings of a new chat were not kept")
	}
	h.Send("Once upon a time")
	h.Wait("the answer", func() bool { return h.Idle() && h.Stored(h.Core.Conv) == 2 })
	got, err := h.M.Settings(h.Core.Conv)
	if err != nil {
		t.Fatal(err)
	}
	if got.SystemPrompt != "You tell short stories." || got.Temperature != 0.2 || got.MaxTokens != 8 {
		t.Errorf("stored settings %+v", got)
	}
	bad := newSettingsPanel(h.Core)
	bad.topP.SetText("two")
	if _, err := bad.values(); err == nil {
		t.Error("top-p \"two\" accepted")
	}
	bad.topP.SetText("1.5")
	if _, err := bad.values(); err == nil {
		t.Error("top-p 1.5 accepted")
	}
}

// TestKVDiskBudgetField: the settings page sets the disk budget of the
// chat caches, shows it when reopened, and refuses a bad number.
func TestKVDiskBudgetField(t *testing.T) {
	disk, err := kvcache.Open(filepath.Join(t.TempDir(), "kv"), 0)
	if err != nil {
		t.Fatal(err)
	}
	h := uitest.NewWindow(t, uitest.Options{Disk: disk})
	p := newSettingsPanel(h.Core)
	if p.kvDiskBudget.Text != "0" {
		t.Errorf("default disk budget field %q, want 0 (automatic)", p.kvDiskBudget.Text)
	}
	p.kvDiskBudget.SetText("300")
	p.onSave()
	h.Settle() // the settings are written on the command worker
	if b, set := h.M.KVDiskBudget(); !set || b != 300<<20 || disk.Budget() != 300<<20 {
		t.Fatalf("disk budget %d (store %d), set %v", b, disk.Budget(), set)
	}
	if p = newSettingsPanel(h.Core); p.kvDiskBudget.Text != "300" {
		t.Errorf("reopened with %q", p.kvDiskBudget.Text)
	}
	p.kvDiskBudget.SetText("-3")
	p.onSave()
	h.Settle()
	if b, _ := h.M.KVDiskBudget(); b != 300<<20 {
		t.Errorf("a bad budget changed it to %d", b)
	}
}

// TestCacheSettings: the settings set the chat's overflow policy and the
// cache memory budget, show them when reopened, and refuse a bad budget.
// (The footers' side of the cache is chat.TestCacheVisible.)
func TestCacheSettings(t *testing.T) {
	h := uitest.NewWindow(t, uitest.Options{})
	h.StoredChat("Budgets")
	h.OpenRow("Budgets")
	p := newSettingsPanel(h.Core)
	if !strings.Contains(p.kvDisk.Text, "0 files") {
		t.Errorf("disk usage without a disk cache: %q", p.kvDisk.Text)
	}
	p.overflow.SetSelectedIndex(1)
	p.kvBudget.SetText("512")
	p.onSave()
	h.Settle() // the settings are written on the command worker
	if got, _ := h.M.Settings(h.Core.Conv); got.Overflow != session.OverflowStop {
		t.Errorf("overflow stored as %q", got.Overflow)
	}
	if b, set := h.M.KVBudget(); !set || b != 512<<20 {
		t.Errorf("budget %d (set %v)", b, set)
	}
	p = newSettingsPanel(h.Core)
	if p.kvBudget.Text != "512" || p.overflow.SelectedIndex() != 1 {
		t.Errorf("settings reopened with budget %q, overflow %d", p.kvBudget.Text, p.overflow.SelectedIndex())
	}
	p.kvBudget.SetText("many")
	p.onSave()
	if b, _ := h.M.KVBudget(); b != 512<<20 {
		t.Errorf("a bad budget changed it to %d", b)
	}
}

// TestSettingsWheel: the mouse wheel over a field of the settings dialog
// scrolls the page (an entry's own scroller used to swallow it), and in a
// short window the dialog fits, its tabs scrolling instead.
func TestSettingsWheel(t *testing.T) {
	h := uitest.NewWindow(t, uitest.Options{})
	h.W.Resize(fyne.NewSize(900, 480))
	Show(h.Core)
	top := h.W.Canvas().Overlays().Top()
	if top == nil {
		t.Fatal("no settings dialog")
	}
	// Its least height fits the window: both tabs scroll as a whole.
	if got := top.MinSize().Height; got > 480 {
		t.Errorf("the dialog needs %v in a window of 480", got)
	}
	scroll, ok := uitest.Find[*container.Scroll](top, nil)
	if !ok {
		t.Fatal("the chat's settings do not scroll")
	}
	var fields []*widget.Entry
	uitest.Walk(scroll.Content, func(o fyne.CanvasObject) bool {
		if e, ok := o.(*widget.Entry); ok && !e.MultiLine {
			fields = append(fields, e)
			return false
		}
		return true
	})
	if len(fields) < 8 {
		t.Fatalf("%d fields on the chat's page", len(fields))
	}
	for _, e := range []int{1, 2} { // top-p, top-k: in view at the start
		field := fields[e]
		before := scroll.Offset.Y
		pos := fyne.CurrentApp().Driver().AbsolutePositionForObject(field).AddXY(field.Size().Width/2, field.Size().Height/2)
		test.Scroll(h.W.Canvas(), pos, 0, -40)
		if scroll.Offset.Y <= before {
			t.Errorf("the wheel over field %d left the page at %v (was %v)", e, scroll.Offset.Y, before)
		}
	}
}

// TestSettingsThemeAndReload: the theme chosen is drawn at once and
// kept; turning off the reload of the last model at start is kept.
func TestSettingsThemeAndReload(t *testing.T) {
	h := uitest.NewWindow(t, uitest.Options{})
	p := newSettingsPanel(h.Core)
	if p.theme.SelectedIndex() != 0 || !p.reloadLast.Checked {
		t.Fatalf("defaults: theme %d, reload %v; want the system's and on", p.theme.SelectedIndex(), p.reloadLast.Checked)
	}
	bg := func() color.Color {
		// Asked for the light variant, as the system would on a light desktop.
		return h.A.Settings().Theme().Color(theme.ColorNameBackground, theme.VariantLight)
	}
	light := theme.DefaultTheme().Color(theme.ColorNameBackground, theme.VariantLight)
	dark := theme.DefaultTheme().Color(theme.ColorNameBackground, theme.VariantDark)
	for _, c := range []struct {
		index int
		want  color.Color
		saved string
	}{{2, dark, core.ThemeDark}, {1, light, core.ThemeLight}, {0, light, core.ThemeSystem}} {
		p = newSettingsPanel(h.Core)
		p.theme.SetSelectedIndex(c.index)
		p.onSave()
		h.Settle()
		if got := bg(); got != c.want {
			t.Errorf("theme %q: background %v, want %v", c.saved, got, c.want)
		}
		if got, _ := h.M.Setting(core.SettingTheme); got != c.saved {
			t.Errorf("theme %q saved as %q", c.saved, got)
		}
		if p = newSettingsPanel(h.Core); p.theme.SelectedIndex() != c.index {
			t.Errorf("theme %q reopened as choice %d", c.saved, p.theme.SelectedIndex())
		}
	}
	p.reloadLast.SetChecked(false)
	p.onSave()
	h.Settle()
	if h.Core.ReloadLast() {
		t.Error("reloading the last model is still on")
	}
	if p = newSettingsPanel(h.Core); p.reloadLast.Checked {
		t.Error("reopened with reloading on")
	}
}

// TestThinkingSwitch: for a model with a thinking switch the chat's
// settings offer it, on by default; turned off, it is stored with the
// chat and the answer comes without reasoning. A model without one has
// no switch.
func TestThinkingSwitch(t *testing.T) {
	h := uitest.NewWindow(t, uitest.Options{})
	h.Load(uitest.StoriesPath(t))
	if p := newSettingsPanel(h.Core); p.thinking != nil {
		t.Error("stories260K has no thinking switch, yet the settings offer one")
	}
	h.Load(testutil.ThinkingQwen3(t))
	p := newSettingsPanel(h.Core)
	if p.thinking == nil {
		t.Fatal("no thinking switch for a thinking Qwen3")
	}
	if !p.thinking.Checked {
		t.Error("thinking is off by default")
	}
	if _, ok := uitest.Find(p.content, func(c *widget.Check) bool { return c == p.thinking }); !ok {
		t.Error("the switch is not in the settings")
	}
	p.thinking.SetChecked(false)
	p.onSave()
	h.Send("Hi")
	h.Wait("the answer", func() bool { return h.Idle() && h.Stored(h.Core.Conv) == 2 })
	got, err := h.M.Settings(h.Core.Conv)
	if err != nil || !got.ThinkingOff {
		t.Fatalf("stored settings %+v, %v: thinking not off", got, err)
	}
	msgs, err := h.M.Messages(h.Core.Conv)
	if err != nil {
		t.Fatal(err)
	}
	if a := msgs[1]; a.Reasoning != "" || a.Content == "" {
		t.Errorf("thinking off, the answer has reasoning %q and content %q", a.Reasoning, a.Content)
	}
	// Reopened, the switch shows the chat's setting; turned on again, it
	// is stored.
	p = newSettingsPanel(h.Core)
	if p.thinking.Checked {
		t.Error("reopened settings show thinking on")
	}
	p.thinking.SetChecked(true)
	p.onSave()
	h.Settle()
	if got, _ := h.M.Settings(h.Core.Conv); got.ThinkingOff {
		t.Error("thinking turned on again was not stored")
	}
}
