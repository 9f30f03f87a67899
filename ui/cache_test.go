package ui

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/churon/churon/app/kvcache"
	"github.com/churon/churon/app/session"
)

// TestCacheVisible: each answer's footer says how much of its prompt came
// from the KV cache (also after reopening the chat, from the store), the
// status line says where the open chat's cache is, a chat that outgrows
// its context shows the notice and goes on, and the settings set the
// cache memory budget and the overflow policy.
func TestCacheVisible(t *testing.T) {
	set := quick(8)
	set.Context = 320
	h := newHarness(t, harnessOptions{settings: &set})
	h.load(storiesPath(t))
	u := h.u

	h.typeAndSend("Once upon a time")
	h.wait("the answer", func() bool { return h.idle() && len(u.chat.views) == 2 && h.last().stats != nil })
	first := h.last()
	if foot := mutedText(first.footer); !strings.Contains(foot, fmt.Sprintf("0 reused · %d processed", first.stats.PromptTokens)) {
		t.Errorf("first answer's footer %q", foot)
	}
	h.wait("the cache state", func() bool { return strings.Contains(u.status.left.Text, "tokens in memory") })

	h.typeAndSend("The little dog")
	h.wait("the follow-up", func() bool { return h.idle() && len(u.chat.views) == 4 && h.last().stats != nil })
	st := h.last().stats
	want := fmt.Sprintf("%d reused · %d processed", st.Reused, st.Processed)
	if st.Reused == 0 || !strings.Contains(mutedText(h.last().footer), want) {
		t.Errorf("follow-up footer %q, stats %+v", mutedText(h.last().footer), st)
	}
	conv := u.conv
	u.openConversation(0)
	u.openConversation(conv)
	if foot := mutedText(h.last().footer); !strings.Contains(foot, want) {
		t.Errorf("after reopening, the footer says %q, want %q", foot, want)
	}
	if !strings.Contains(u.status.left.Text, "cache: ") {
		t.Errorf("status line %q does not say where the cache is", u.status.left.Text)
	}
	// docs/screenshots/chat-cache.png: the footers and the status line, in
	// the dark theme throughout (see darkTheme).
	if os.Getenv("CHURON_SCREENSHOTS") != "" {
		h.a.Settings().SetTheme(darkTheme{NewTheme()})
		h.drain()
		saveScreenshot(t, "chat-cache.png", h.w.Canvas().Capture())
		h.a.Settings().SetTheme(NewTheme())
	}

	// Outgrow the 320-token context: a notice shows and the chat goes on.
	var notice *messageView
	for i := 0; i < 8 && notice == nil; i++ {
		n := len(u.chat.views)
		h.typeAndSend(fmt.Sprintf("Tell me about the %d birds.", i+2))
		h.wait("the answer", func() bool { return h.idle() && len(u.chat.views) > n+1 && h.last().stats != nil })
		for _, v := range u.chat.views {
			if v.msg.Role == "notice" {
				notice = v
			}
		}
		if r := session.Reason(h.last().msg.FinishReason); r == session.ReasonError {
			t.Fatalf("turn %d failed", i+2)
		}
	}
	if notice == nil {
		t.Fatal("no notice after outgrowing the context")
	}
	if got := text(notice.obj); !strings.Contains(got, "no longer seen by the model") {
		t.Errorf("notice says %q", got)
	}

	// Settings: the overflow policy of this chat and the cache budget.
	p := newSettingsPanel(u)
	if !strings.Contains(p.kvDisk.Text, "0 files") {
		t.Errorf("disk usage without a disk cache: %q", p.kvDisk.Text)
	}
	p.overflow.SetSelectedIndex(1)
	p.kvBudget.SetText("512")
	p.onSave()
	if got, _ := h.m.Settings(u.conv); got.Overflow != session.OverflowStop {
		t.Errorf("overflow stored as %q", got.Overflow)
	}
	if b, set := h.m.KVBudget(); !set || b != 512<<20 {
		t.Errorf("budget %d (set %v)", b, set)
	}
	p = newSettingsPanel(u)
	if p.kvBudget.Text != "512" || p.overflow.SelectedIndex() != 1 {
		t.Errorf("settings reopened with budget %q, overflow %d", p.kvBudget.Text, p.overflow.SelectedIndex())
	}
	p.kvBudget.SetText("many")
	p.onSave()
	if b, _ := h.m.KVBudget(); b != 512<<20 {
		t.Errorf("a bad budget changed it to %d", b)
	}
}

// TestKVDiskBudgetField: the settings page sets the disk budget of the
// chat caches, shows it when reopened, and refuses a bad number.
func TestKVDiskBudgetField(t *testing.T) {
	disk, err := kvcache.Open(filepath.Join(t.TempDir(), "kv"), 0)
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, harnessOptions{disk: disk})
	p := newSettingsPanel(h.u)
	if p.kvDiskBudget.Text != "0" {
		t.Errorf("default disk budget field %q, want 0 (automatic)", p.kvDiskBudget.Text)
	}
	p.kvDiskBudget.SetText("300")
	p.onSave()
	if b, set := h.m.KVDiskBudget(); !set || b != 300<<20 || disk.Budget() != 300<<20 {
		t.Fatalf("disk budget %d (store %d), set %v", b, disk.Budget(), set)
	}
	if p = newSettingsPanel(h.u); p.kvDiskBudget.Text != "300" {
		t.Errorf("reopened with %q", p.kvDiskBudget.Text)
	}
	p.kvDiskBudget.SetText("-3")
	p.onSave()
	if b, _ := h.m.KVDiskBudget(); b != 300<<20 {
		t.Errorf("a bad budget changed it to %d", b)
	}
}
