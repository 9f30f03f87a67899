package compare

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/churon/churon/app/api/session"
	"github.com/churon/churon/app/remote"
	"github.com/churon/churon/internal/remotetest"
	"github.com/churon/churon/internal/uitest"
	"github.com/churon/churon/ui/core"
)

// TestCompareRemote: the Compare page lists a connection's model beside
// the local files, marked remote; ticked with two local quantizations it
// runs a comparison across engines against a real `churon serve` on
// loopback (or a server that sends no logprobs): every column answers
// with its speed, the local ones with the quality estimated from the
// reference's alternatives or the reason there is none, and the page
// says plainly that such a comparison is not saved or exported.
func TestCompareRemote(t *testing.T) {
	for _, c := range []struct {
		name string
		// serve returns the connection's base URL and model.
		serve func(t *testing.T, f16 string) (base, model string)
		// local is what each local column's quality line says.
		local, ref string
		// refErr is in the reference column's error line.
		refErr string
	}{
		{"churon serve", func(t *testing.T, f16 string) (string, string) {
			srv := remotetest.ServeModel(t, f16, "")
			return srv.Base, srv.Model
		}, "an estimate from the reference's 5 alternatives", "The reference", ""},
		{"no logprobs", func(t *testing.T, _ string) (string, string) {
			fake := httptest.NewServer(remotetest.Faults()[4].Handler) // streams "Once upon", then the connection drops
			t.Cleanup(fake.Close)
			return fake.URL, "m"
		}, "No quality figures: the reference gave no logprobs.", "The reference failed: no quality figures.", "cut off"},
	} {
		t.Run(c.name, func(t *testing.T) {
			l, paths := uitest.LocalLibrary(t, "F16", "Q8_0")
			base, model := c.serve(t, paths[0])
			conns := uitest.Connections(t, "", remote.Connection{Name: "lab", BaseURL: base, Models: []string{model}})
			h := newHarness(t, uitest.Options{Models: &l, Remotes: conns})
			p := h.openCompare(3)
			rp := session.RemotePath("lab", model)
			var found bool
			for _, r := range p.pick.rows {
				if r.m.Path == rp {
					found = true
					if want := core.ModelLabel(rp); r.check.Text != want || !strings.HasSuffix(want, "lab (remote)") {
						t.Errorf("the remote row reads %q, want %q", r.check.Text, want)
					}
				}
			}
			if !found {
				t.Fatalf("the chooser does not list %s", rp)
			}
			h.tickAll(p)
			h.runCompare(p, "Tell me a story.", "12")
			if p.errLine.Visible() {
				t.Fatalf("error line: %q", p.errLine.Text)
			}
			if len(p.cols) != 3 {
				t.Fatalf("%d columns", len(p.cols))
			}
			for i, col := range p.cols {
				path := p.run.paths[i]
				state, quality := col.state.String(), col.diffCap.String()
				t.Logf("%s: %q | %q | %q", col.title.Text, state, quality, col.text)
				want, wantErr := c.local, ""
				if session.IsRemote(path) {
					want, wantErr = c.ref, c.refErr
				}
				if wantErr != "" {
					if !col.errText.Visible() || !strings.Contains(col.errText.Text, wantErr) || col.text == "" {
						t.Errorf("column %s: error %q (shown %v), text %q; want %q and the text streamed", path, col.errText.Text, col.errText.Visible(), col.text, wantErr)
					}
				} else if col.errText.Visible() || col.text == "" || !strings.Contains(state, "first token") || !strings.Contains(state, "tokens/s") {
					t.Errorf("column %s: error %q, text %q, speed %q", path, col.errText.Text, col.text, state)
				}
				if session.IsRemote(path) {
					if !strings.Contains(col.title.Text, "(remote)") {
						t.Errorf("the remote column is titled %q", col.title.Text)
					}
				} else if c.name == "churon serve" && !strings.Contains(quality, "KLD ≈") {
					t.Errorf("column %s shows no KLD estimate: %q", path, quality)
				}
				if !strings.Contains(quality, want) {
					t.Errorf("column %s: quality %q, want %q", path, quality, want)
				}
			}
			if !strings.Contains(p.status.Text, "compare local models only") || p.exportMD.Disabled() == false {
				t.Errorf("status %q, Markdown export enabled %v", p.status.Text, !p.exportMD.Disabled())
			}
			// A language change rebuilds the page: the columns come back.
			h.Core.SetLanguage("en")
			if k := h.screen().page; k == p || len(k.cols) != 3 || k.cols[0].diffCap.String() != p.cols[0].diffCap.String() ||
				k.cols[2].text != p.cols[2].text || k.status.Text != p.status.Text {
				t.Errorf("the rebuilt page lost the comparison: %d columns, status %q", len(k.cols), k.status.Text)
			}
			if cs, _ := h.St.ListComparisons(context.Background(), 10); len(cs) != 0 {
				t.Errorf("a comparison across engines was saved: %v", cs)
			}
		})
	}
}
