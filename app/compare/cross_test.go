package compare_test

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	api "github.com/churon/churon/app/api/compare"
	"github.com/churon/churon/app/api/session"
	. "github.com/churon/churon/app/compare"
	"github.com/churon/churon/app/remote"
	"github.com/churon/churon/internal/remotetest"
)

// TestCrossEngines: a remote model served by `churon serve` (F16) is the
// reference of a comparison with local files of the same model: the
// same F16 file scores (near) zero KLD and full top-1 agreement, the
// Q4_0 file more; speeds and texts come for every column.
func TestCrossEngines(t *testing.T) {
	f16, q4 := TinyModel(t, "F16", 512, false), TinyModel(t, "Q4_0", 512, false)
	srv := remotetest.ServeModel(t, f16, "")
	conns := remote.Open(filepath.Join(t.TempDir(), remote.FileName), nil)
	if _, err := conns.Add(remote.Connection{Name: "lab", BaseURL: srv.Base}, "", false); err != nil {
		t.Fatal(err)
	}
	rp := session.RemotePath("lab", srv.Model)
	res, err := RunCross(context.Background(), api.CrossOptions{Models: []string{f16, q4, rp}, Remotes: conns,
		Prompt: "Tell me a story.", MaxTokens: 24, TopK: 5, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Reference != 2 || !strings.Contains(res.Label, "estimated from the 5 most likely tokens") {
		t.Fatalf("reference %d, label %q", res.Reference, res.Label)
	}
	for i, c := range res.Columns {
		if c.Error != "" || c.Text == "" || c.GenTokens == 0 || c.TTFTMs <= 0 {
			t.Errorf("column %d: %+v", i, c)
		}
	}
	same, quant := res.Columns[0], res.Columns[1]
	if same.KLD == nil || quant.KLD == nil || same.Positions == 0 {
		t.Fatalf("no quality figures: %+v / %+v", same, quant)
	}
	t.Logf("prompt tokens: local %d, remote %d; texts %q / %q", same.PromptTokens, res.Columns[2].PromptTokens, same.Text, res.Columns[2].Text)
	t.Logf("F16: KLD %.5f, top-1 %.3f over %d places; Q4_0: KLD %.5f, top-1 %.3f", *same.KLD, *same.Top1, same.Positions, *quant.KLD, *quant.Top1)
	// The same weights on the same engine: equal but for the last bits
	// of a differently batched pass (AMX tiles, engine.Model.Step).
	if *same.KLD > 1e-3 || *same.Top1 < 0.95 {
		t.Errorf("the reference's own file: KLD %g, top-1 %g; want ≈0 and ≈1", *same.KLD, *same.Top1)
	}
	if *quant.KLD <= *same.KLD {
		t.Errorf("Q4_0's KLD %g is not above F16's %g", *quant.KLD, *same.KLD)
	}
}

// TestCrossNoLogprobs: a reference that sends no logprobs gets its speed
// and text, and the reason instead of quality figures.
func TestCrossNoLogprobs(t *testing.T) {
	f16 := TinyModel(t, "F16", 512, false)
	fake := httptest.NewServer(remotetest.Faults()[4].Handler) // streams "Once upon", then the connection drops
	defer fake.Close()
	conns := remote.Open(filepath.Join(t.TempDir(), remote.FileName), nil)
	if _, err := conns.Add(remote.Connection{Name: "flaky", BaseURL: fake.URL}, "", false); err != nil {
		t.Fatal(err)
	}
	res, err := RunCross(context.Background(), api.CrossOptions{Models: []string{f16, "remote:flaky/m"}, Remotes: conns,
		Prompt: "Tell me a story.", MaxTokens: 8, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	ref, local := res.Columns[1], res.Columns[0]
	if !strings.Contains(ref.Error, "cut off") || ref.Text != "Once upon" {
		t.Errorf("reference: %+v", ref)
	}
	if local.KLD != nil || !strings.Contains(local.Note, "no quality figures") || local.Text == "" {
		t.Errorf("local: %+v", local)
	}
}
