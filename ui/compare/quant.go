package compare

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"fyne.io/fyne/v2/lang"

	"github.com/churon/churon/app/api/compare"
	"github.com/churon/churon/models/library"
	"github.com/churon/churon/ui/core"
)

// The Compare page's "Make a Q4_K_M copy": app/compare quantizes (the
// window never reaches into the engine), with progress and Cancel on the
// page; the copy goes into the library folder and is ticked when done.

// quantJob is the quantization under way on the Compare page.
type quantJob struct {
	cancel context.CancelFunc
	src    library.Model
	out    string
	typ    string
	done   atomic.Int64
	total  atomic.Int64
}

// progressEvery is how often a quantization's progress reaches the page.
const progressEvery = 100 * time.Millisecond

func (c *modelChooser) quantizing() bool { return c.job != nil }

// quantOutPath names the copy as `churon quantize` would
// (model-F16.gguf → model-Q4_K_M.gguf), in the library folder: the source
// may sit in another app's folder, and a copy there could not be deleted
// from the Models page like a download can.
func quantOutPath(svc compare.Service, dir, src, typ string) string {
	return filepath.Join(dir, filepath.Base(svc.QuantizedName(src, typ)))
}

// startQuantize makes a typ copy of m. A source that is already quantized
// is refused by the first attempt; the person is asked, since a copy of a
// copy loses more, and the second attempt allows it.
func (c *modelChooser) startQuantize(m library.Model, typ string) {
	if c.quantizing() {
		return
	}
	c.quantize(m, typ, false)
}

func (c *modelChooser) quantize(m library.Model, typ string, requant bool) {
	w := c.p.w
	out := quantOutPath(c.p.w.Compare, c.p.models.Dir(), m.Path, typ)
	if _, err := os.Stat(out); err == nil {
		// Made before: use it.
		c.want = out
		c.reload()
		c.p.setStatus(lang.X("compare.quant.exists", "{{.Name}} exists already: it is ticked.", map[string]any{"Name": filepath.Base(out)}))
		return
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		c.p.showError(err)
		return
	}
	c.p.clearError()
	ctx, cancel := context.WithCancel(w.Ctx)
	job := &quantJob{cancel: cancel, src: m, out: out, typ: typ}
	c.job = job
	c.quantLabel.SetText(lang.X("compare.quant.running", "Making {{.Name}}…", map[string]any{"Name": filepath.Base(out)}))
	c.quantBar.SetValue(0)
	c.quantStop.Enable()
	c.quantRow.Show()
	c.p.refreshRun()
	finished := make(chan error, 1)
	go func() {
		_, err := w.Compare.Quantize(ctx, m.Path, out, compare.QuantizeOptions{Type: typ, AllowRequantize: requant,
			Progress: func(done, total int64) {
				job.done.Store(done)
				job.total.Store(total)
			}})
		finished <- err
	}()
	go func() {
		t := time.NewTicker(progressEvery)
		defer t.Stop()
		for {
			select {
			case err := <-finished:
				cancel()
				w.Do(func() { c.quantized(job, err) })
				return
			case <-t.C:
				w.Do(func() {
					if c.job == job && job.total.Load() > 0 {
						c.quantBar.SetValue(float64(job.done.Load()) / float64(job.total.Load()))
					}
				})
			}
		}
	}()
}

// quantized runs on Fyne's goroutine when a quantization ends.
func (c *modelChooser) quantized(job *quantJob, err error) {
	if c.job != job {
		return
	}
	c.job = nil
	c.quantRow.Hide()
	c.p.refreshRun()
	switch {
	case errors.Is(err, context.Canceled):
		c.p.setStatus(lang.X("compare.quant.cancelled", "Quantization cancelled; nothing was kept."))
	case c.p.w.Compare.IsRequantize(err):
		m, typ := job.src, job.typ
		c.p.w.ConfirmAction(lang.X("compare.requant.title", "Quantize a quantized model?"),
			lang.X("compare.requant.body", "{{.Name}} is already {{.Src}}: a {{.Type}} copy made from it loses more than one made from the original (F16 or F32) weights. Make it anyway?",
				map[string]any{"Name": core.ModelLabel(m.Path), "Src": m.Meta.Quant, "Type": typ}),
			lang.X("compare.requant.yes", "Make it anyway"), func() { c.quantize(m, typ, true) })
	case err != nil:
		c.p.showError(fmt.Errorf("%s: %w", lang.X("compare.quant.failed", "Could not make the copy"), err))
	default:
		c.p.setStatus(lang.X("compare.quant.done", "Made {{.Name}}. It is ticked for the comparison.", map[string]any{"Name": filepath.Base(job.out)}))
		c.want = job.out
		c.reload()
	}
}

func (c *modelChooser) onStopQuantize() {
	if c.job != nil {
		c.quantStop.Disable()
		c.job.cancel()
	}
}
