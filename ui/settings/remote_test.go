package settings

import (
	"strings"
	"testing"

	"github.com/churon/churon/internal/remotetest"
	"github.com/churon/churon/internal/uitest"
)

// TestRemoteEnginesTab: a person adds an endpoint in Settings (name,
// address, key), it lists its models and says where the key is kept;
// Test reports it; Remove takes it away — and the key shows nowhere.
func TestRemoteEnginesTab(t *testing.T) {
	srv := remotetest.Serve(t, remotetest.Key)
	conns := uitest.Connections(t, "")
	h := uitest.NewWindow(t, uitest.Options{Remotes: conns})
	p := newSettingsPanel(h.Core)
	if p.remote == nil {
		t.Fatal("no Remote engines tab with connections")
	}
	changed := 0
	h.Core.RemotesChanged = func() { changed++ }
	p.remote.name.SetText("local")
	p.remote.url.SetText(srv.Base)
	p.remote.key.SetText(remotetest.Key)
	p.remote.onAdd()
	h.Wait("the connection added", func() bool { return strings.HasPrefix(p.remote.state.Text, "Added local") })
	if p.remote.state.Text != "Added local: 1 models, in the model menu now." || changed == 0 {
		t.Fatalf("state %q, menu told %d times", p.remote.state.Text, changed)
	}
	h.Wait("the list", func() bool { return strings.Contains(uitest.Text(p.remote.list), srv.Model) })
	listed := uitest.Text(p.remote.list)
	if !strings.Contains(listed, srv.Base+"/v1") || !strings.Contains(listed, "permissions 0600") {
		t.Errorf("the list says %q", listed)
	}
	p.remote.onTest("local")
	h.Wait("the test", func() bool { return strings.Contains(p.remote.state.Text, "streaming") })
	if !strings.Contains(p.remote.state.Text, "streaming yes, logprobs yes") {
		t.Errorf("test said %q", p.remote.state.Text)
	}
	for _, s := range []string{listed, p.remote.state.Text, uitest.Text(p.remote.content)} {
		if strings.Contains(s, remotetest.Key) {
			t.Errorf("the key shows in the settings: %q", s)
		}
	}
	p.remote.onRemove("local")
	h.Wait("the removal", func() bool { return strings.Contains(uitest.Text(p.remote.list), "No connections yet.") })
	if list, _ := conns.List(); len(list) != 0 {
		t.Fatalf("still %+v", list)
	}
}
