package settings

import (
	"net/http"
	"strings"
	"testing"

	apiserve "github.com/churon/churon/app/api/serve"
	"github.com/churon/churon/internal/uitest"
	"github.com/churon/churon/serve"
)

// TestAPIServerSwitch: the settings' API tab starts the server with what
// the form says, keeps it in the settings for the next start, says where
// it listens, stops it, and refuses another address without a key.
func TestAPIServerSwitch(t *testing.T) {
	h := uitest.NewWindow(t, uitest.Options{})
	h.Load(uitest.StoriesPath(t))
	srv := serve.New(serve.Options{Session: h.M})
	t.Cleanup(func() { srv.Stop() })
	h.Core.Server = srv
	p := newSettingsPanel(h.Core)
	if p.server == nil || p.server.enabled.Checked || p.server.state.Text != "Off" {
		t.Fatalf("a fresh API tab: %+v", p.server)
	}
	p.server.enabled.SetChecked(true)
	p.server.addr.SetText("127.0.0.1:0")
	p.server.store.SetChecked(true)
	p.server.maxAnswers.SetText("3")
	p.onSave()
	h.Settle()
	st := srv.Status()
	if !st.On || !strings.HasPrefix(st.URL, "http://127.0.0.1:") {
		t.Fatalf("after turning it on: %+v", st)
	}
	resp, err := http.Get(st.URL + "/models")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET %s/models: %v %v", st.URL, err, resp)
	}
	resp.Body.Close()
	cfg, on := apiserve.ConfigFrom(h.M.Setting)
	if !on || cfg.Addr != "127.0.0.1:0" || !cfg.Store {
		t.Fatalf("kept for the next start: %+v %v", cfg, on)
	}
	if v, _ := h.M.Setting(settingMaxAnswers); v != "3" {
		t.Fatalf("answers at once: %q", v)
	}
	if s, _ := h.M.Status(); s.MaxAnswers != 3 {
		t.Fatalf("the session's cap: %d", s.MaxAnswers)
	}
	p = newSettingsPanel(h.Core)
	if !p.server.enabled.Checked || !strings.Contains(p.server.state.Text, st.URL) {
		t.Fatalf("reopened: checked %v, %q", p.server.enabled.Checked, p.server.state.Text)
	}
	p.server.enabled.SetChecked(false)
	p.onSave()
	h.Settle()
	if srv.Status().On {
		t.Fatal("still on after turning it off")
	}
	p = newSettingsPanel(h.Core)
	p.server.enabled.SetChecked(true)
	p.server.addr.SetText("0.0.0.0:0")
	p.onSave()
	h.Settle()
	if st := srv.Status(); st.On || !strings.Contains(st.Err, "API key") {
		t.Fatalf("every interface without a key: %+v", st)
	}
}
