// Package desktop opens Churon's window: it wires the chat database, the
// services (the session manager and the comparisons on the engine, the
// model library and downloads) and the ui package to a real Fyne app. It
// lives outside ui/ because it is where the window meets the engine. It is the only
// package that imports fyne.io/fyne/v2/app, which needs cgo and OpenGL
// (GLFW) — or Fyne's "ci" build tag, which swaps in the headless test
// driver so that `CGO_ENABLED=0 go test -tags ci ./ui/...` builds it too.
package desktop

import (
	"context"
	"fmt"
	"os"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/app"

	apiserve "github.com/churon/churon/app/api/serve"
	"github.com/churon/churon/app/compare"
	"github.com/churon/churon/app/models"
	"github.com/churon/churon/app/paths"
	"github.com/churon/churon/app/remote"
	"github.com/churon/churon/app/session"
	"github.com/churon/churon/app/store"
	"github.com/churon/churon/assets"
	"github.com/churon/churon/engine/arch"
	"github.com/churon/churon/internal/gcpace"
	"github.com/churon/churon/internal/gcpace/cmalloc"
	"github.com/churon/churon/models/header"
	"github.com/churon/churon/serve"
	"github.com/churon/churon/ui"
	uimodels "github.com/churon/churon/ui/models"
)

// AppID is the app's unique id (also in FyneApp.toml).
const AppID = "io.github.churon.Churon"

// Run opens the window and returns the process exit code when it closes.
func Run() int {
	gcpace.Start(os.Getenv) // the heap's soft limit; see the package
	cmalloc.Start()         // freed textures' memory back to the system; see the package
	st, err := store.OpenDefault(context.Background())
	if err != nil {
		fmt.Fprintf(os.Stderr, "churon: %v\n", err)
		return 1
	}
	defer st.Close()
	// KV snapshots let an old chat resume without re-reading its history;
	// without the folder the app still works, only slower to resume.
	// Remote engines: the connections `churon remote` and Settings add.
	remotes := remote.Open(remote.DefaultPath(), remote.SystemKeyring())
	opt := session.Options{Remote: remotes}
	if disk, err := session.OpenDiskCache(0); err != nil {
		fmt.Fprintf(os.Stderr, "churon: %v (continuing without KV snapshots)\n", err)
	} else {
		opt.Disk = disk
	}
	m := session.New(st, opt)
	defer m.Close()
	// The Models page marks models of architectures the engine lacks; the
	// session keeps the hub's token with the other settings.
	mdl := models.New(models.Options{Headers: header.Reader{}, Settings: m, Architectures: arch.Names(), PartLabel: uimodels.PartLabel})
	defer mdl.Close() // downloads stop; they resume on the next run

	if paths.Home() != "" {
		if err := keepFyneUnder(paths.ConfigDir()); err != nil {
			fmt.Fprintf(os.Stderr, "churon: %v\n", err)
			return 1
		}
	}
	a := app.NewWithID(AppID)
	a.SetIcon(fyne.NewStaticResource("churon.png", assets.IconPNG))
	a.Settings().SetTheme(ui.NewTheme())
	w := a.NewWindow("Churon")
	w.Resize(fyne.NewSize(1180, 780))
	// A comparison measures with the machine to itself: the chats' answers
	// wait meanwhile, in the session's own scheduler.
	// The OpenAI-compatible API server, on when the person turned it on
	// (Settings → API server); it answers in the session's batch.
	srv := serve.New(serve.Options{Session: m, LogOutput: os.Stderr})
	defer srv.Stop() // before the session closes (deferred earlier)
	if cfg, on := apiserve.ConfigFrom(m.Setting); on {
		if err := srv.Start(cfg); err != nil {
			// The status line and the settings say why (Status.Err).
			fmt.Fprintf(os.Stderr, "churon: the API server did not start: %v\n", err)
		}
	}
	u := ui.New(a, w, ui.Options{Session: m, Compare: compare.Runner{Exclusive: m.Exclusive}, Models: mdl, Server: srv, Remotes: remotes})
	defer u.Close()
	w.SetMaster()
	w.ShowAndRun()
	return 0
}
