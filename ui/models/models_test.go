package models

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	appmodels "github.com/churon/churon/app/models"
	"github.com/churon/churon/assets/catalog"
	"github.com/churon/churon/engine/quant"
	"github.com/churon/churon/internal/uitest"
	"github.com/churon/churon/models/download"
	"github.com/churon/churon/models/fit"
	"github.com/churon/churon/models/header"
	"github.com/churon/churon/models/hub/hubtest"
	"github.com/churon/churon/models/library"
	"github.com/churon/churon/models/synth"
	"github.com/churon/churon/ui/core"
)

// harness is the whole window over a real session (uitest.NewWindow),
// with the Models page's state at hand.
type harness struct{ *uitest.Window }

func newHarness(t *testing.T, o uitest.Options) *harness { return &harness{uitest.NewWindow(t, o)} }

// state is the Models page's state.
func (h *harness) state() *State { return h.Screens().Models.(*State) }

// unload unloads the model, as the model menu does.
func (h *harness) unload() {
	if err := h.M.UnloadModel(); err != nil {
		h.T.Fatal(err)
	}
}

// testCatalog is a one-model catalog whose model lives on the fake hub.
func testCatalog(t *testing.T, h *hubtest.Hub) *catalog.Catalog {
	t.Helper()
	spec := synth.Tiny("llama")
	f := h.File(hubtest.Repo, "tiny-llama-F32.gguf")
	c, err := catalog.Parse([]byte(fmt.Sprintf(`{"version":1,"recommended":["tiny-llama"],"models":[{
		"id":"tiny-llama","name":"Tiny Llama","family":"Llama","repo":%q,"file":"tiny-llama-F32.gguf","quant":"F32",
		"size":%d,"parameters":200000,"context":%d,"architecture":"llama","layers":%d,"heads":%d,"kv_heads":%d,
		"head_dim":%d,"embedding":%d,"license":"MIT","description":{"en":"A test model.","ko":"시험용 모델입니다."},"verified":true}]}`,
		hubtest.Repo, len(f.Data), spec.Context, spec.Layers, spec.Heads, spec.KVHeads, spec.Embd/spec.Heads, spec.Embd)))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestModelsSearchDownloadLoad walks the whole way a person takes: from
// the welcome view to the Models page, a hub search, a repository's
// quantizations with their fit verdicts (read from one header with Range
// requests), a download, the library listing it with its origin, and
// loading it into the chat.
func TestModelsSearchDownloadLoad(t *testing.T) {
	hub := hubtest.New(t)
	opt := uitest.HubLibrary(t, hub)
	h := newHarness(t, uitest.Options{Models: &opt})

	test.Tap(uitest.FindButton(t, h.W.Content(), "Browse models…"))
	p := h.state().page
	if p == nil || !uitest.Shown(h.W, p.content) {
		t.Fatal("Browse models did not open the Models page")
	}
	if h.Screens().ComposerContent.Visible() {
		t.Error("the message box shows over the Models page")
	}
	if !strings.Contains(p.memLine.Text, "16.0 GiB") || !strings.Contains(p.memLine.Text, "12.0 GiB") {
		t.Errorf("memory line %q", p.memLine.Text)
	}

	p.tabs.Select(p.searchTab)
	test.Type(p.query, "tiny")
	test.Tap(p.searchBtn)
	h.Wait("search results", func() bool { return strings.Contains(uitest.Text(p.results), hubtest.Repo) })
	if res := uitest.Text(p.results); strings.Contains(res, "other/not-this-one") || !strings.Contains(res, "12.3K downloads") {
		t.Errorf("results:\n%s", res)
	}
	test.Tap(uitest.FindButton(t, p.results, "Show files"))
	h.Wait("the quantizations with a verdict", func() bool { return len(p.variants) == 2 && p.variants[0].checked })
	var f32 *variantRow
	for _, r := range p.variants {
		if r.meta == nil || r.meta.Layers != 2 || r.meta.Architecture != "llama" {
			t.Errorf("%s: shape %+v, want the header's (llama, 2 layers)", r.v.Quant, r.meta)
		}
		if !strings.HasPrefix(r.verdict.Text, "Fits: needs about") || r.verdict.Importance != widget.SuccessImportance {
			t.Errorf("%s: verdict %q (%v)", r.v.Quant, r.verdict.Text, r.verdict.Importance)
		}
		if r.v.Quant == "F32" {
			f32 = r
		}
	}
	if f32 == nil {
		t.Fatalf("no F32 variant among %d", len(p.variants))
	}
	file := hub.File(hubtest.Repo, "tiny-llama-F32.gguf")
	// The verdict came from the Q8_0 file's header (the default pick),
	// read in ranges, never the whole file.
	if hub.Ranged.Load() == 0 || hub.Served.Load() >= int64(len(hub.File(hubtest.Repo, "tiny-llama-Q8_0.gguf").Data)) {
		t.Errorf("header read: %d ranged requests, %d bytes served", hub.Ranged.Load(), hub.Served.Load())
	}
	test.Tap(f32.action)
	h.Wait("the download to finish", func() bool {
		ds := h.state().svc.Downloads()
		return len(ds) == 1 && ds[0].Status() == download.Completed
	})
	dest := filepath.Join(opt.Dir, "test", "tiny-llama-GGUF", "tiny-llama-F32.gguf")
	got, err := os.ReadFile(dest)
	if err != nil || !bytes.Equal(got, file.Data) {
		t.Fatalf("downloaded file: %v (%d bytes, want %d)", err, len(got), len(file.Data))
	}
	h.Wait("the downloads tab to show it done", func() bool {
		r := p.dlRows[h.state().svc.Downloads()[0]]
		return r != nil && strings.HasPrefix(r.detail.Text, "Done") && r.load.Visible() && !r.pause.Visible()
	})
	h.Wait("the variant to offer Load", func() bool { f32.refresh(); return f32.action.Text == "Load" })

	p.tabs.Select(p.libTab)
	h.Wait("the library to list it", func() bool { return len(p.libRows) == 1 })
	row := p.libRows[0]
	if row.m.Path != dest || row.m.Origin.Repo != hubtest.Repo || row.m.Origin.SHA256 != file.SHA256() || !row.m.Managed {
		t.Errorf("library entry %+v", row.m)
	}
	if lt := uitest.Text(row.content); !strings.Contains(lt, "From "+hubtest.Repo) || !strings.Contains(lt, "Fits") {
		t.Errorf("library row:\n%s", lt)
	}
	test.Tap(uitest.FindButton(t, row.content, "Load"))
	h.Wait("the model to load", func() bool { return h.Core.Model != nil && h.Core.Model.Path == dest })
	if h.Core.ModelsShown || !uitest.Shown(h.W, h.Screens().ChatContent) || !h.Screens().ComposerContent.Visible() {
		t.Error("after Load the chat is not shown")
	}
	// The menu's entry opens the page again, where the model reads as loaded.
	h.state().Show()
	if !uitest.Shown(h.W, h.state().page.content) {
		t.Fatal("showModelsPage did not show the page")
	}
}

// TestModelsPauseResumeCancel drives a catalog download that the server
// holds half way: pause keeps the partial file, resume continues, cancel
// (after confirming) removes everything; the next try completes.
func TestModelsPauseResumeCancel(t *testing.T) {
	hub := hubtest.New(t)
	opt := uitest.HubLibrary(t, hub)
	opt.Catalog = testCatalog(t, hub)
	h := newHarness(t, uitest.Options{Models: &opt})
	h.state().Show()
	p := h.state().page
	if len(p.catRows) != 1 {
		t.Fatalf("%d catalog rows", len(p.catRows))
	}
	cr := p.catRows[0]
	if !strings.HasPrefix(cr.verdict.Text, "Fits") || cr.action.Text != "Download" {
		t.Errorf("catalog row: verdict %q, action %q", cr.verdict.Text, cr.action.Text)
	}

	// Details reads the header from the hub for the exact estimate.
	test.Tap(uitest.FindButton(t, cr.content, "Details"))
	h.Wait("the header check", func() bool { return strings.Contains(cr.detail.Text, "From its header") })
	if !strings.Contains(cr.detail.Text, "llama, 2 layers") || !strings.Contains(cr.detail.Text, hubtest.Repo) {
		t.Errorf("details: %q", cr.detail.Text)
	}

	file := hub.File(hubtest.Repo, "tiny-llama-F32.gguf")
	half := int64(len(file.Data) / 2)
	hub.Hold(half)
	test.Tap(cr.action)
	var d *download.Download
	h.Wait("the download to reach the hold", func() bool {
		if ds := h.state().svc.Downloads(); len(ds) == 1 {
			d = ds[0]
		}
		return d != nil && d.Status() == download.Running && d.BytesComplete() == half
	})
	h.Wait("the catalog row to follow it", func() bool {
		return cr.progress.Visible() && cr.action.Text == "Pause" && strings.HasPrefix(cr.dlInfo.Text, "Downloading… · ")
	})
	dest := d.Request().Dest

	// Pause from the catalog row; the Downloads tab follows.
	test.Tap(cr.action)
	h.Wait("paused from the row", func() bool { return d.Status() == download.Paused && cr.action.Text == "Resume" })
	p.tabs.Select(p.dlTab)
	h.Wait("the downloads tab", func() bool { return p.dlRows[d] != nil })
	r := p.dlRows[d]
	if !strings.Contains(p.dlTab.Text, "(1)") {
		t.Errorf("tab title %q lacks the count", p.dlTab.Text)
	}
	h.Wait("the downloads tab to say paused", func() bool { return r.pause.Text == "Resume" && strings.HasPrefix(r.detail.Text, "Paused") })
	if _, err := os.Stat(dest + ".part"); err != nil {
		t.Errorf("paused, but the partial file is gone: %v", err)
	}
	if _, err := os.Stat(dest); err == nil {
		t.Error("a paused download left a file under the final name")
	}
	test.Tap(r.pause)
	h.Wait("running again", func() bool { return d.Status() == download.Running && r.pause.Text == "Pause" })

	test.Tap(r.cancel)
	test.Tap(uitest.OverlayButton(t, h.W, "Cancel download"))
	h.Wait("cancelled", func() bool { return d.Status() == download.Canceled })
	for _, f := range []string{dest, dest + ".part", dest + ".part.json"} {
		if _, err := os.Stat(f); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s remains after cancel (%v)", filepath.Base(f), err)
		}
	}
	h.Wait("the catalog row to offer Download again", func() bool { return cr.action.Text == "Download" && !cr.action.Disabled() })
	lib, _ := library.Open(opt.Dir, header.Local)
	if ms, _ := lib.List(t.Context()); len(ms) != 0 {
		t.Errorf("the library lists %d models after a cancelled download", len(ms))
	}

	hub.Unhold()
	test.Tap(cr.action)
	h.Wait("the second try to finish", func() bool { return core.FileExists(dest) && cr.action.Text == "Load" })
	if got, _ := os.ReadFile(dest); !bytes.Equal(got, file.Data) {
		t.Error("the completed file differs from the server's")
	}
	ds := h.state().svc.Downloads()
	last := ds[len(ds)-1]
	h.Wait("the finished download to offer Load", func() bool { r := p.dlRows[last]; return r != nil && r.load.Visible() })
	if r := p.dlRows[d]; r.load.Visible() || !strings.HasPrefix(r.detail.Text, "Cancelled") {
		t.Errorf("the cancelled row says %q and offers Load: %v", r.detail.Text, r.load.Visible())
	}
	test.Tap(p.dlRows[last].load)
	h.Wait("the model to load", func() bool { return h.Core.Model != nil && h.Core.Model.Path == dest })
}

// TestWelcomeRecommendsAndLoads is the first-run path: the welcome view
// offers the catalog model that fits, and one click downloads and loads
// it.
func TestWelcomeRecommendsAndLoads(t *testing.T) {
	hub := hubtest.New(t)
	opt := uitest.HubLibrary(t, hub)
	opt.Catalog = testCatalog(t, hub)
	h := newHarness(t, uitest.Options{Models: &opt})
	rec := h.state().rec
	wt := uitest.Text(rec.content)
	for _, want := range []string{"Recommended for this computer", "Tiny Llama", "Fits: needs about", "[Download and load]", "[Browse models…]"} {
		if !strings.Contains(wt, want) {
			t.Errorf("welcome card lacks %q:\n%s", want, wt)
		}
	}
	test.Tap(rec.action)
	dest := filepath.Join(opt.Dir, "test", "tiny-llama-GGUF", "tiny-llama-F32.gguf")
	h.Wait("the recommended model to download and load", func() bool { return h.Core.Model != nil && h.Core.Model.Path == dest })
	if !uitest.Shown(h.W, h.Screens().ChatContent) {
		t.Error("the chat is not shown once the model loaded")
	}
	// Back on the welcome view (after unloading), the model is offered to load.
	h.unload()
	h.Wait("the welcome view", func() bool { return h.Core.Model == nil && uitest.Shown(h.W, h.state().rec.content) })
	h.state().rec.refresh()
	if got := h.state().rec.action.Text; got != "Load Tiny Llama" {
		t.Errorf("welcome action %q once downloaded", got)
	}
}

// TestCatalogVerdicts checks the embedded catalog's verdicts on machines
// of several sizes, the warning for architectures the engine lacks, and
// that the recommendation is the first recommended model that fits.
func TestCatalogVerdicts(t *testing.T) {
	hub := hubtest.New(t)
	opt := uitest.HubLibrary(t, hub)
	// The machine's memory changes between the cases below.
	var memMu sync.Mutex
	memory := uitest.FixedMemory(16<<30, 12<<30)
	opt.Memory = func() (fit.Memory, error) {
		memMu.Lock()
		defer memMu.Unlock()
		return memory()
	}
	setMemory := func(total, avail int64) {
		memMu.Lock()
		memory = uitest.FixedMemory(total, avail)
		memMu.Unlock()
	}
	h := newHarness(t, uitest.Options{Models: &opt})
	s := h.state()
	h.state().Show()
	p := h.state().page
	if len(p.catRows) < 10 {
		t.Fatalf("%d catalog rows", len(p.catRows))
	}
	byID := map[string]*catalogRow{}
	for _, r := range p.catRows {
		byID[r.m.ID] = r
		warn := strings.Contains(uitest.Text(r.content), "Churon cannot run")
		// The harness's engine runs the 2024 families only, so the
		// catalog's newer ones (gemma3, qwen3moe) show the warning.
		if want := !slices.Contains(opt.Architectures, r.m.Architecture); warn != want {
			t.Errorf("%s (%s): warning shown %v", r.m.ID, r.m.Architecture, warn)
		}
	}
	// The recommended model leads the list, marked as the pick.
	if rec, _, ok := s.svc.Recommend(); !ok || p.catRows[0].m.ID != rec.ID {
		t.Errorf("the first row is %s, the recommendation %s", p.catRows[0].m.ID, rec.ID)
	}
	for i, r := range p.catRows {
		if r.badge.Visible() != (i == 0) {
			t.Errorf("row %d (%s): pick badge shown %v", i, r.m.ID, r.badge.Visible())
		}
	}
	cases := []struct {
		total, avail int64
		want         map[string]fit.Verdict
		rec          string // the welcome view's recommendation ("": none)
	}{
		{64 << 30, 48 << 30, map[string]fit.Verdict{"qwen2.5-0.5b-instruct": fit.Fits, "qwen3-8b": fit.Fits, "llama-3.1-8b-instruct": fit.Fits}, "qwen3-4b-instruct-2507"},
		{8 << 30, 6 << 30, map[string]fit.Verdict{"qwen2.5-0.5b-instruct": fit.Fits, "qwen3-8b": fit.Tight}, "qwen3-4b-instruct-2507"},
		// Llama 3.2 3B fits only tightly here: a smaller model that fits
		// comfortably is the better first model.
		{4 << 30, 3 << 30, map[string]fit.Verdict{"qwen2.5-0.5b-instruct": fit.Fits, "llama-3.2-3b-instruct": fit.Tight, "qwen3-8b": fit.WontFit, "qwen2.5-7b-instruct": fit.WontFit}, "qwen2.5-1.5b-instruct"},
		{1 << 30, 512 << 20, map[string]fit.Verdict{"qwen3-8b": fit.WontFit}, ""},
	}
	words := map[fit.Verdict]string{fit.Fits: "Fits:", fit.Tight: "Tight:", fit.WontFit: "Will not fit:"}
	for _, tc := range cases {
		setMemory(tc.total, tc.avail)
		h.state().Show()
		for id, want := range tc.want {
			r := byID[id]
			if r == nil {
				t.Fatalf("no %s in the catalog", id)
			}
			if r.res.Verdict != want || !strings.HasPrefix(r.verdict.Text, words[want]) {
				t.Errorf("%d GiB: %s: %v %q, want %v", tc.total>>30, id, r.res.Verdict, r.verdict.Text, want)
			}
		}
		// A model that needs less never gets a worse verdict.
		for _, a := range p.catRows {
			for _, b := range p.catRows {
				if a.res.Need < b.res.Need && a.res.Verdict > b.res.Verdict {
					t.Errorf("%d GiB: %s needs less than %s but is %v against %v", tc.total>>30, a.m.ID, b.m.ID, a.res.Verdict, b.res.Verdict)
				}
			}
		}
		m, res, ok := s.svc.Recommend()
		if m.ID != tc.rec || ok != (tc.rec != "") {
			t.Errorf("%d GiB: recommended %q (%v, %v), want %q", tc.total>>30, m.ID, res.Verdict, ok, tc.rec)
		}
		if ok && res.Verdict != fit.Fits && res.Verdict != fit.Tight {
			t.Errorf("%d GiB: recommended %s, which is %v", tc.total>>30, m.ID, res.Verdict)
		}
		// Whatever is recommended, nothing earlier in the list that the
		// engine runs fits as well.
		for _, id := range s.svc.Catalog().Recommended {
			if !ok || id == m.ID {
				break
			}
			if r := byID[id]; slices.Contains(opt.Architectures, r.m.Architecture) && r.res.Verdict != fit.Unknown && r.res.Verdict <= res.Verdict {
				t.Errorf("%d GiB: recommended %s (%v) although %s, earlier in the list, is %v", tc.total>>30, m.ID, res.Verdict, id, r.res.Verdict)
			}
		}
	}
	// Downloading a model that will not fit asks first; declining starts nothing.
	big := byID["qwen3-8b"]
	if big.res.Verdict != fit.WontFit {
		t.Fatalf("qwen3-8b is %v on the 1 GiB machine", big.res.Verdict)
	}
	test.Tap(big.action)
	test.Tap(uitest.OverlayButton(t, h.W, "Cancel"))
	if s.svc.IsPending(big.m.ID) || len(s.svc.Downloads()) != 0 {
		t.Errorf("declining started a download (pending %v, %d downloads)", s.svc.IsPending(big.m.ID), len(s.svc.Downloads()))
	}
	// With only llama supported, only a llama model is recommended.
	llamaOnly := opt
	llamaOnly.Architectures, llamaOnly.Memory = []string{"llama"}, uitest.FixedMemory(64<<30, 48<<30)
	llamaOnly.Headers, llamaOnly.QueueFile = header.Reader{}, "-"
	svc := appmodels.New(llamaOnly)
	defer svc.Close()
	if m, _, ok := svc.Recommend(); !ok || m.Architecture != "llama" {
		t.Errorf("llama-only engine: recommended %q (%s)", m.ID, m.Architecture)
	}
	// On a tiny machine the welcome view offers the page, not a model.
	setMemory(1<<30, 512<<20)
	s.svc.ReadMemory()
	w := newWelcomeRec(s)
	if wt := uitest.Text(w.content); w.ok || !strings.Contains(wt, "[Browse models…]") || strings.Contains(wt, "Recommended for this computer") {
		t.Errorf("tiny machine: welcome card\n%s", wt)
	}
}

// TestLibraryVerifyDelete checks Verify against the recorded SHA-256, and
// Delete (after confirming): a downloaded file is deleted, a file used in
// place only leaves the list.
func TestLibraryVerifyDelete(t *testing.T) {
	hub := hubtest.New(t)
	opt := uitest.HubLibrary(t, hub)
	data := hubtest.TinyGGUF(t, quant.F32, 7)
	managed := filepath.Join(opt.Dir, "someone", "repo", "tiny.gguf")
	if err := os.MkdirAll(filepath.Dir(managed), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(managed, data, 0o644); err != nil {
		t.Fatal(err)
	}
	elsewhere := filepath.Join(t.TempDir(), "mine.gguf")
	if err := os.WriteFile(elsewhere, hubtest.TinyGGUF(t, quant.F32, 8), 0o644); err != nil {
		t.Fatal(err)
	}
	lib, err := library.Open(opt.Dir, header.Local)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	if err := lib.Record(managed, library.Origin{Repo: "someone/repo", File: "tiny.gguf", SHA256: hex.EncodeToString(sum[:])}); err != nil {
		t.Fatal(err)
	}
	if err := lib.AddFile(elsewhere); err != nil {
		t.Fatal(err)
	}

	h := newHarness(t, uitest.Options{Models: &opt})
	h.state().Show()
	p := h.state().page
	p.tabs.Select(p.libTab)
	h.Wait("the library", func() bool { return len(p.libRows) == 2 })
	rowOf := func(path string) *libRow {
		for _, r := range p.libRows {
			if r.m.Path == path {
				return r
			}
		}
		t.Fatalf("no row for %s in\n%s", path, uitest.Text(p.libBox))
		return nil
	}
	r := rowOf(managed)
	if !r.verify.Visible() || rowOf(elsewhere).verify.Visible() {
		t.Error("Verify is offered where no hash is known, or not where one is")
	}
	test.Tap(r.verify)
	h.Wait("verified", func() bool { return strings.HasPrefix(r.status.Text, "Intact") })
	// Damage one byte of the weights: the header still reads, the hash does not match.
	data[len(data)-1] ^= 0xff
	if err := os.WriteFile(managed, data, 0o644); err != nil {
		t.Fatal(err)
	}
	test.Tap(r.verify)
	h.Wait("damage found", func() bool { return strings.HasPrefix(r.status.Text, "Damaged") })
	if r.status.Importance != widget.DangerImportance {
		t.Error("damage is not shown as an error")
	}

	test.Tap(r.del)
	test.Tap(uitest.OverlayButton(t, h.W, "Delete"))
	h.Wait("the deleted model to leave the list", func() bool { return len(p.libRows) == 1 })
	if _, err := os.Stat(managed); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the downloaded file is still there: %v", err)
	}
	r = rowOf(elsewhere)
	test.Tap(r.del)
	test.Tap(uitest.OverlayButton(t, h.W, "Remove"))
	h.Wait("the file used in place to leave the list", func() bool { return len(p.libRows) == 0 })
	if _, err := os.Stat(elsewhere); err != nil {
		t.Errorf("a file used in place was deleted: %v", err)
	}
}

// TestModelsQueueResumesAfterRestart: a download left in the queue file
// resumes when the window is made again, before the page is opened.
func TestModelsQueueResumesAfterRestart(t *testing.T) {
	hub := hubtest.New(t)
	opt := uitest.HubLibrary(t, hub)
	file := hub.File(hubtest.Repo, "tiny-llama-Q8_0.gguf")
	dest := filepath.Join(opt.Dir, "test", "tiny-llama-GGUF", "tiny-llama-Q8_0.gguf")
	queue := []map[string]any{{"url": hub.URL() + "/" + hubtest.Repo + "/resolve/main/tiny-llama-Q8_0.gguf", "dest": dest, "sha256": file.SHA256(), "label": "tiny Q8_0"}}
	b, _ := json.Marshal(queue)
	if err := os.MkdirAll(filepath.Dir(opt.QueueFile), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(opt.QueueFile, b, 0o644); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, uitest.Options{Models: &opt})
	h.Wait("the queued download to finish", func() bool { return core.FileExists(dest) })
	if got, _ := os.ReadFile(dest); !bytes.Equal(got, file.Data) {
		t.Error("the resumed download differs from the server's file")
	}
	if h.state().page != nil {
		t.Error("the page was made although nobody opened it")
	}
}

func TestFolderURL(t *testing.T) {
	dir := t.TempDir()
	u := folderURL(filepath.Join(dir, "m.gguf"))
	if u.Scheme != "file" || u.Path != filepath.ToSlash(dir) {
		t.Fatalf("folderURL = %s, want file://%s", u, filepath.ToSlash(dir))
	}
	if got := folderURL(filepath.Join(dir, "with space", "m.gguf")).String(); got != "file://"+filepath.ToSlash(dir)+"/with%20space" {
		t.Errorf("spaces not escaped: %s", got)
	}
}

// TestDownloadWithoutTheHub: a download that cannot reach the hub says so
// in the person's words, with the technical reason behind Details.
func TestDownloadWithoutTheHub(t *testing.T) {
	hub := hubtest.New(t)
	opt := uitest.HubLibrary(t, hub)
	opt.Catalog = testCatalog(t, hub)
	hub.Server.Close() // the hub is gone: connections are refused
	h := newHarness(t, uitest.Options{Models: &opt})
	h.state().Show()
	p := h.state().page
	if len(p.catRows) != 1 {
		t.Fatalf("%d catalog rows", len(p.catRows))
	}
	test.Tap(p.catRows[0].action)
	h.Wait("the error banner", func() bool { return strings.Contains(uitest.Text(h.Core.Notice), "Can't reach Hugging Face") })
	got := uitest.Text(h.Core.Notice)
	words, details := strings.Index(got, "internet connection"), strings.Index(got, "[Details]")
	if words < 0 || details < words || !strings.Contains(got[details:], "connection refused") {
		t.Errorf("banner %q: want the person's words, the technical reason behind Details", got)
	}
}
