package compare

import (
	"context"
	"path"
	"slices"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/lang"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/churon/churon/app/api/session"
	"github.com/churon/churon/app/remote"
	"github.com/churon/churon/models/hub"
	"github.com/churon/churon/models/library"
	"github.com/churon/churon/ui/core"
)

// modelChooser is the Compare page's list of the models on this computer,
// each with a box to tick, and the ways to get more quantizations of a
// model: make one here (app/compare quantizes), or download a sibling
// from the repository it came from.
type modelChooser struct {
	p      *comparePage
	status *widget.Label
	box    *fyne.Container
	rows   []*chooseRow
	picked []string // paths, in the order they were ticked
	gen    int
	// remotes are the connections' models (remote:CONN/MODEL), listed
	// after the library.
	remotes []string

	// The quantization under way, if any (quant.go), and a
	// model to tick once the list shows it (a copy just made).
	job        *quantJob
	want       string
	quantRow   *fyne.Container
	quantLabel *widget.Label
	quantBar   *widget.ProgressBar
	quantStop  *widget.Button

	content fyne.CanvasObject
}

type chooseRow struct {
	c       *modelChooser
	m       library.Model
	check   *widget.Check
	content fyne.CanvasObject
}

func newModelChooser(p *comparePage) *modelChooser {
	c := &modelChooser{p: p}
	c.status = widget.NewLabel("")
	c.status.Wrapping = fyne.TextWrapWord
	c.box = container.NewVBox()
	addFile := widget.NewButtonWithIcon(lang.X("models.add_file", "Add a file…"), theme.FileIcon(), c.onAddFile)
	refresh := widget.NewButtonWithIcon("", theme.ViewRefreshIcon(), c.reload)
	for _, b := range []*widget.Button{addFile, refresh} {
		b.Importance = widget.LowImportance
	}
	c.quantLabel = widget.NewLabel("")
	c.quantLabel.Wrapping = fyne.TextWrapWord
	c.quantBar = widget.NewProgressBar()
	c.quantStop = widget.NewButtonWithIcon(lang.X("models.cancel", "Cancel"), theme.CancelIcon(), c.onStopQuantize)
	c.quantRow = core.Row(container.NewVBox(c.quantLabel, c.quantBar), c.quantStop)
	c.quantRow.Hide()
	head := container.NewBorder(nil, nil, sectionTitle(lang.X("compare.models", "Models — tick two to four")), container.NewHBox(addFile, refresh))
	c.content = container.NewVBox(head, c.status, c.box, c.quantRow)
	return c
}

// chosen lists the ticked models in the order they were ticked.
func (c *modelChooser) chosen() []string { return slices.Clone(c.picked) }

// reload lists the library and the connections' models in the
// background.
func (c *modelChooser) reload() {
	w := c.p.w
	if w.Remotes == nil {
		w.ListModels(&c.gen, c.show)
		return
	}
	core.Then(w.Reads, w.Remotes.List, func(list []remote.Connection, err error) {
		if err == nil { // else Settings says what is wrong with the file
			c.remotes = c.remotes[:0]
			for _, conn := range list {
				for _, m := range conn.Models {
					c.remotes = append(c.remotes, session.RemotePath(conn.Name, m))
				}
			}
		}
		w.ListModels(&c.gen, c.show)
	})
}

func (c *modelChooser) show(ms []library.Model, err error) {
	c.box.RemoveAll()
	c.rows = nil
	present := map[string]bool{}
	c.status.SetText(core.ListStatus(err, core.ErrorText, len(ms),
		lang.X("compare.models.empty", "No models on this computer yet. Download one on the Models page, or add GGUF files you have."),
		lang.X("compare.models.hint", "Quality is measured against the reference, by default the model with the most bits per weight. Models must share a vocabulary: quantizations of one model do.")))
	for _, m := range ms {
		if m.Err != "" {
			continue // an unreadable file cannot be compared; the Models page says why
		}
		present[m.Path] = true
		r := c.newRow(m)
		c.rows = append(c.rows, r)
		c.box.Add(r.content)
	}
	for _, rp := range c.remotes {
		present[rp] = true
		r := c.newRemoteRow(rp)
		c.rows = append(c.rows, r)
		c.box.Add(r.content)
	}
	// A ticked model that left the library (deleted) is no longer ticked.
	c.picked = slices.DeleteFunc(c.picked, func(p string) bool { return !present[p] })
	for _, r := range c.rows {
		r.check.SetChecked(slices.Contains(c.picked, r.m.Path))
	}
	c.box.Refresh()
	c.refreshLimits()
	if c.want != "" && present[c.want] {
		c.tick(c.want)
		c.want = ""
	}
}

func (c *modelChooser) newRow(m library.Model) *chooseRow {
	r := &chooseRow{c: c, m: m}
	r.check = widget.NewCheck(core.ModelLabel(m.Path), r.onCheck)
	var info []string
	meta := m.Meta
	params := core.FormatParams(meta.Parameters)
	if params != "?" {
		params = lang.X("models.params", "{{.N}} parameters", map[string]any{"N": params})
	}
	info = append(info, core.Known(meta.Quant, core.FormatBytes(m.Size), meta.Architecture, params)...)
	if m.Origin.Repo != "" {
		info = append(info, m.Origin.Repo)
	}
	more := widget.NewButtonWithIcon("", theme.MoreHorizontalIcon(), nil)
	more.Importance = widget.LowImportance
	more.OnTapped = func() { r.onMenu(more) }
	line := core.NewMuted(theme.SizeNameCaptionText, fyne.TextWrapOff)
	line.Truncation = fyne.TextTruncateEllipsis
	core.SetMuted(line, strings.Join(info, " · "))
	r.content = container.NewBorder(nil, nil, r.check, more, line)
	return r
}

// newRemoteRow is a model served elsewhere: it answers beside the local
// files, and as the reference its logprobs estimate their quality.
func (c *modelChooser) newRemoteRow(path string) *chooseRow {
	r := &chooseRow{c: c, m: library.Model{Path: path}}
	r.check = widget.NewCheck(core.ModelLabel(path), r.onCheck)
	conn, _, _ := session.ParseRemote(path)
	line := core.NewMuted(theme.SizeNameCaptionText, fyne.TextWrapOff)
	line.Truncation = fyne.TextTruncateEllipsis
	core.SetMuted(line, lang.X("compare.remote.info", "served by the connection {{.Conn}}; as the reference, its logprobs estimate the local models' quality",
		map[string]any{"Conn": conn}))
	icon := widget.NewIcon(theme.ComputerIcon())
	r.content = container.NewBorder(nil, nil, r.check, container.NewCenter(icon), line)
	return r
}

func (r *chooseRow) onCheck(on bool) {
	c := r.c
	has := slices.Contains(c.picked, r.m.Path)
	switch {
	case on && !has:
		c.picked = append(c.picked, r.m.Path)
	case !on && has:
		c.picked = slices.DeleteFunc(c.picked, func(p string) bool { return p == r.m.Path })
	}
	c.refreshLimits()
}

// refreshLimits stops a fifth model from being ticked and keeps the
// reference choice and Run in step.
func (c *modelChooser) refreshLimits() {
	full := len(c.picked) >= maxCompare
	for _, r := range c.rows {
		if full && !r.check.Checked {
			r.check.Disable()
		} else {
			r.check.Enable()
		}
	}
	c.p.refreshReference()
	c.p.refreshRun()
}

// tick ticks the model at path (tests, and a new quantization).
func (c *modelChooser) tick(path string) {
	for _, r := range c.rows {
		if r.m.Path == path && !r.check.Checked && len(c.picked) < maxCompare {
			r.check.SetChecked(true)
		}
	}
}

// quickTypes are the quantizations the page offers to make of a model:
// the usual everyday choice and the near-lossless one.
var quickTypes = []string{"Q4_K_M", "Q8_0"}

func (r *chooseRow) onMenu(anchor *widget.Button) {
	c := r.c
	var items []*fyne.MenuItem
	for _, typ := range quickTypes {
		item := fyne.NewMenuItem(lang.X("compare.make", "Make a {{.Type}} copy", map[string]any{"Type": typ}), func() {
			c.startQuantize(r.m, typ)
		})
		// One heavy job at a time: a quantization running beside a
		// comparison would falsify its speed figures.
		item.Disabled = c.quantizing() || c.p.running() || strings.EqualFold(r.m.Meta.Quant, typ)
		items = append(items, item)
	}
	if r.m.Origin.Repo != "" {
		items = append(items, fyne.NewMenuItemSeparator(),
			fyne.NewMenuItem(lang.X("compare.siblings", "Other quantizations on Hugging Face…"), func() { c.showSiblings(r.m) }))
	}
	widget.ShowPopUpMenuAtRelativePosition(fyne.NewMenu("", items...), c.p.w.Win.Canvas(),
		fyne.NewPos(0, anchor.Size().Height), anchor)
}

func (c *modelChooser) onAddFile() {
	w := c.p.w
	w.OpenGGUF("", func(p string) {
		models := c.p.models
		core.Then(w.Commands, func() (struct{}, error) { return struct{}{}, models.AddFile(p) }, func(_ struct{}, err error) {
			if err != nil {
				w.ShowError(err)
				return
			}
			c.picked = append(c.picked, p)
			c.reload()
		})
	})
}

// showSiblings lists the other quantizations in the repository a model
// was downloaded from, to download them with the Models page's download
// manager; each lands in the library and shows up here when done.
func (c *modelChooser) showSiblings(m library.Model) {
	w := c.p.w
	repo := m.Origin.Repo
	rev := m.Origin.Revision
	if rev == "" {
		rev = "main"
	}
	status := widget.NewLabel(lang.X("models.listing", "Listing files…"))
	status.Wrapping = fyne.TextWrapWord
	list := container.NewVBox()
	body := container.NewBorder(status, nil, nil, nil, container.NewVScroll(list))
	d := dialog.NewCustom(lang.X("compare.siblings.title", "Quantizations of {{.Repo}}", map[string]any{"Repo": repo}),
		lang.X("compare.close", "Close"), body, w.Win)
	d.Resize(fyne.NewSize(640, 480))
	d.Show()
	hc := c.p.models.Hub()
	go func() {
		ctx, cancel := context.WithTimeout(w.Ctx, core.HubTimeout)
		defer cancel()
		files, err := hc.Files(ctx, repo, rev)
		vs := hub.Variants(files)
		w.Do(func() {
			status.SetText(core.ListStatus(err, core.HubError, len(vs), // no files listed on an error
				lang.X("models.nogguf", "This repository has no GGUF files."),
				lang.X("compare.siblings.intro", "Quantizations of one model share its vocabulary, so any of them can be compared with the one you have.")))
			for _, v := range vs {
				list.Add(c.siblingRow(repo, rev, v))
			}
			list.Refresh()
		})
	}()
}

// siblingRow is one quantization in the repository: downloaded already,
// downloading, or a Download button.
func (c *modelChooser) siblingRow(repo, rev string, v hub.Variant) fyne.CanvasObject {
	s := c.p.models
	name := v.Quant
	if name == "" {
		name = v.Name
	}
	var dests []string
	for _, f := range v.Files {
		dests = append(dests, s.DestFor(repo, f.Path))
	}
	btn := widget.NewButton(lang.X("models.download", "Download"), nil)
	state := func() {
		switch {
		case core.AllPresent(dests):
			btn.SetText(lang.X("compare.siblings.have", "On this computer"))
			btn.Disable()
		case s.Active(dests[0]) != nil:
			btn.SetText(lang.X("models.st.running", "Downloading…"))
			btn.Disable()
		case !v.Complete:
			btn.Disable()
		}
	}
	btn.OnTapped = func() {
		// The chooser lists the model once it is in place (OnLibrary).
		s.QueueVariant(repo, rev, v, false)
		btn.SetText(lang.X("models.st.running", "Downloading…"))
		btn.Disable()
	}
	state()
	info := []string{path.Base(v.Files[0].Path), core.FormatBytes(v.Size)}
	return core.Row(core.Lines(core.BoldLabel(name), core.MutedLine(strings.Join(info, " · "))), btn)
}
