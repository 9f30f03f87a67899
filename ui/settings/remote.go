package settings

import (
	"context"
	"fmt"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/lang"
	"fyne.io/fyne/v2/widget"

	"github.com/churon/churon/app/remote"
	"github.com/churon/churon/ui/core"
)

// remotePanel adds, tests and removes connections to remote engines
// (OpenAI-compatible servers: llama-server, vLLM, Ollama, LM Studio,
// another Churon, a cloud API). Its changes take effect at once, not on
// Save: a connection is a thing the person makes, not a setting.
type remotePanel struct {
	w              *core.Window
	name, url, key *widget.Entry
	add            *widget.Button
	state          *widget.Label
	list           *fyne.Container
	content        fyne.CanvasObject
	conns          []remote.Connection
}

func newRemotePanel(w *core.Window) *remotePanel {
	p := &remotePanel{w: w}
	p.name = widget.NewEntry()
	p.name.SetPlaceHolder("lab")
	p.url = widget.NewEntry()
	p.url.SetPlaceHolder("http://192.168.1.20:8080")
	p.key = widget.NewPasswordEntry()
	p.key.SetPlaceHolder(lang.X("settings.api.key.none", "none"))
	p.add = widget.NewButton(lang.X("settings.remote.add", "Add and list its models"), p.onAdd)
	p.state = wrapped("")
	p.list = container.NewVBox()
	form := widget.NewForm(
		&widget.FormItem{Text: lang.X("settings.remote.name", "Name"), Widget: p.name,
			HintText: lang.X("settings.remote.name.hint", "How the model menu calls it: letters, digits, - and _")},
		&widget.FormItem{Text: lang.X("settings.remote.url", "Address"), Widget: p.url,
			HintText: lang.X("settings.remote.url.hint", "An OpenAI-compatible server: llama-server, vLLM, Ollama, LM Studio, churon serve; /v1 is added")},
		&widget.FormItem{Text: lang.X("settings.api.key", "API key"), Widget: p.key,
			HintText: lang.X("settings.remote.key.hint", "Kept in the system keyring when there is one, else in the settings folder (readable by you only)")},
		&widget.FormItem{Widget: p.add},
	)
	intro := wrapped(lang.X("settings.remote.intro", "Chat with models served by another machine. Their models appear in the model menu, marked remote; chats, compare and export work as with local ones."))
	p.content = container.NewVBox(intro, form, p.state, widget.NewSeparator(), p.list)
	p.reload()
	return p
}

// reload lists the connections in the background.
func (p *remotePanel) reload() {
	core.Then(p.w.Reads, p.w.Remotes.List, func(list []remote.Connection, err error) {
		if err != nil {
			p.state.SetText(err.Error())
			return
		}
		p.conns = list
		p.showList()
	})
}

func (p *remotePanel) showList() {
	p.list.RemoveAll()
	if len(p.conns) == 0 {
		p.list.Add(wrapped(lang.X("settings.remote.none", "No connections yet.")))
	}
	for _, c := range p.conns {
		c := c
		models := strings.Join(c.Models, ", ")
		if models == "" {
			models = lang.X("settings.remote.nomodels", "no models listed yet: Test asks the server")
		}
		lines := []string{c.Name + " — " + c.BaseURL, models}
		if c.HasKey {
			lines = append(lines, lang.X("settings.remote.keyin", "API key kept in {{.Where}}", map[string]any{"Where": c.KeyWhere}))
		}
		info := wrapped(strings.Join(lines, "\n"))
		test := widget.NewButton(lang.X("settings.remote.test", "Test"), func() { p.onTest(c.Name) })
		rm := widget.NewButton(lang.X("settings.remote.remove", "Remove"), func() { p.onRemove(c.Name) })
		p.list.Add(container.NewBorder(nil, nil, nil, container.NewHBox(test, rm), info))
	}
	p.list.Refresh()
}

func (p *remotePanel) changed() {
	p.reload()
	if p.w.RemotesChanged != nil {
		p.w.RemotesChanged()
	}
}

func (p *remotePanel) onAdd() {
	name, url, key := strings.TrimSpace(p.name.Text), strings.TrimSpace(p.url.Text), p.key.Text
	if name == "" || url == "" {
		p.state.SetText(lang.X("settings.remote.need", "Give the connection a name and an address."))
		return
	}
	p.add.Disable()
	p.state.SetText(lang.X("settings.remote.adding", "Asking {{.URL}} for its models…", map[string]any{"URL": url}))
	conns := p.w.Remotes
	type added struct {
		c      remote.Connection
		models []string
		listed error
	}
	core.Then(p.w.Commands, func() (added, error) {
		c, err := conns.Add(remote.Connection{Name: name, BaseURL: url}, key, false)
		if err != nil {
			return added{}, err
		}
		ctx, cancel := context.WithTimeout(p.w.Ctx, 30*time.Second)
		defer cancel()
		ms, lerr := conns.Refresh(ctx, name)
		return added{c: c, models: ms, listed: lerr}, nil
	}, func(a added, err error) {
		p.add.Enable()
		if err != nil {
			p.state.SetText(err.Error())
			return
		}
		p.name.SetText("")
		p.url.SetText("")
		p.key.SetText("")
		if a.listed != nil {
			p.state.SetText(lang.X("settings.remote.added.unlisted", "Added {{.Name}}, but its models could not be listed: {{.Err}}",
				map[string]any{"Name": a.c.Name, "Err": a.listed.Error()}))
		} else {
			p.state.SetText(lang.X("settings.remote.added", "Added {{.Name}}: {{.N}} models, in the model menu now.",
				map[string]any{"Name": a.c.Name, "N": len(a.models)}))
		}
		p.changed()
	})
}

func (p *remotePanel) onTest(name string) {
	p.state.SetText(lang.X("settings.remote.testing", "Testing {{.Name}}…", map[string]any{"Name": name}))
	conns := p.w.Remotes
	core.Then(p.w.Commands, func() (remote.Report, error) {
		ctx, cancel := context.WithTimeout(p.w.Ctx, time.Minute)
		defer cancel()
		rep, err := conns.Test(ctx, name, "")
		if err == nil && len(rep.Models) > 0 {
			_ = conns.SetModels(name, rep.Models)
		}
		return rep, err
	}, func(rep remote.Report, err error) {
		if err != nil {
			p.state.SetText(err.Error())
			return
		}
		yes := func(b bool) string {
			if b {
				return lang.X("settings.remote.yes", "yes")
			}
			return lang.X("settings.remote.no", "no")
		}
		line := fmt.Sprintf("%s: %.0f ms, %d models; streaming %s, logprobs %s", name,
			float64(rep.Latency.Microseconds())/1000, len(rep.Models), yes(rep.Streaming), yes(rep.Logprobs))
		if rep.StreamErr != nil {
			line += "\n" + rep.StreamErr.Error()
		}
		p.state.SetText(line)
		p.changed()
	})
}

func (p *remotePanel) onRemove(name string) {
	conns := p.w.Remotes
	p.w.Commands.Run(func() error {
		if err := conns.Remove(name); err != nil {
			return err
		}
		p.w.Do(p.changed)
		return nil
	}, func(err error) { p.state.SetText(err.Error()) })
}
