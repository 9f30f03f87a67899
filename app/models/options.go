package models

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"time"

	"github.com/churon/churon/app/paths"
	"github.com/churon/churon/assets/catalog"
	"github.com/churon/churon/models/download"
	"github.com/churon/churon/models/fit"
	"github.com/churon/churon/models/hub"
)

// Options configure a Service. The zero value is the app's: models in
// paths.DataDir()/models, the queue in paths.CacheDir(), the hub from
// $CHURON_HUB_URL, the "models.hub_url" setting or huggingface.co.
type Options struct {
	// HubURL and Token override the hub's address and access token.
	HubURL, Token string
	// Headers reads GGUF headers for the library and the fit check
	// (models/header.Reader{}: the service itself stays free of the
	// engine). Required.
	Headers Headers
	// Settings, when set, is where the hub's address and token are read
	// and the token is saved (the session manager, for the app).
	Settings Settings
	// Dir is the library folder, where downloads go.
	Dir string
	// QueueFile keeps the download queue across restarts; "-" keeps none
	// (the command line downloads while it runs).
	QueueFile string
	// Download tunes every download (connections, retries, free space).
	Download download.Options
	// Concurrency is how many files download at once (default 2).
	Concurrency int
	// Memory reports the machine's memory; nil means fit.SystemMemory.
	Memory func() (fit.Memory, error)
	// Architectures lists the model architectures the engine runs
	// (arch.Names, given by whoever wires the service to the engine); a
	// model of another one is marked and never recommended. nil means
	// unknown: nothing is marked.
	Architectures []string
	// Catalog replaces the embedded catalog (tests).
	Catalog *catalog.Catalog
	// Poll is how often the downloads are looked at (default 250 ms).
	Poll time.Duration
	// PartLabel names part n of a multi-file model in the download list
	// (front ends translate it); nil gives "NAME (part N of M)".
	PartLabel func(name string, n, of int) string
}

// Headers reads what a GGUF file's header says of its model: of a file
// in the library, or of one on the hub through Range requests (fetched
// says how many bytes that took).
type Headers interface {
	Local(path string) (fit.Meta, error)
	Remote(ctx context.Context, url string, authorize func(*http.Request)) (meta fit.Meta, fetched int64, err error)
}

// Settings is where the service keeps what the person chose. The session
// manager is one: writes go through it, so it knows of them.
type Settings interface {
	Setting(key string) (string, bool)
	SetSetting(key, value string) error
}

// Settings and environment read for the hub.
const (
	SettingHubURL   = "models.hub_url"
	SettingHubToken = "models.hub_token"
	EnvHubURL       = "CHURON_HUB_URL"
	EnvHubToken     = "HF_TOKEN"
)

func (o Options) withDefaults() Options {
	if o.Poll <= 0 {
		o.Poll = 250 * time.Millisecond
	}
	if o.Dir == "" {
		o.Dir = DefaultDir()
	}
	switch o.QueueFile {
	case "":
		o.QueueFile = filepath.Join(paths.CacheDir(), "downloads.json")
	case "-":
		o.QueueFile = ""
	}
	if o.Memory == nil {
		o.Memory = fit.SystemMemory
	}
	if o.PartLabel == nil {
		o.PartLabel = func(name string, n, of int) string { return fmt.Sprintf("%s (part %d of %d)", name, n, of) }
	}
	return o
}

// DefaultDir is the app's library folder.
func DefaultDir() string { return filepath.Join(paths.DataDir(), "models") }

// Dest is where a repository's file is kept in the library folder dir:
// the one rule the Models page and `churon pull` share.
func Dest(dir, repo, file string) string {
	return filepath.Join(dir, filepath.FromSlash(repo), filepath.Base(filepath.FromSlash(file)))
}

// hubClient makes the hub client from the options, the settings and the
// environment, in that order of precedence (the token: options, setting,
// environment).
func (s *Service) newHubClient() *hub.Client {
	return hub.New(hub.Options{BaseURL: s.hubURL(), Token: s.hubToken()})
}
