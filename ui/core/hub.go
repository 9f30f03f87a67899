package core

import (
	"errors"
	"time"

	"fyne.io/fyne/v2/lang"

	"github.com/churon/churon/models/hub"
)

// HubTimeout bounds one hub request made for a page (a search, a file
// listing, a header read).
const HubTimeout = 45 * time.Second

// DiscoverTimeout bounds a search for model files on this computer (a
// library listing reads every model's header).
const DiscoverTimeout = 20 * time.Second

// HubError says a hub error in the person's language where it is one the
// UI knows.
func HubError(err error) string {
	switch {
	case errors.Is(err, hub.ErrUnauthorized):
		return lang.X("models.err.auth", "Access denied: this repository is gated or private. Accept its terms on huggingface.co and save an access token below.")
	case errors.Is(err, hub.ErrRateLimited):
		return lang.X("models.err.rate", "Hugging Face asks to slow down; try again in a minute.")
	case errors.Is(err, hub.ErrNotFound):
		return lang.X("models.err.notfound", "Not found on Hugging Face.")
	}
	if msg, details := Describe(err); details != "" {
		return msg // the network's own words stay behind Details
	}
	return lang.X("models.err.hub", "Could not reach Hugging Face: {{.Err}}", map[string]any{"Err": err.Error()})
}
