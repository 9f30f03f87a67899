package core

import (
	"errors"
	"io/fs"
	"net"
	"strings"

	"fyne.io/fyne/v2/lang"

	"github.com/churon/churon/app/api/session"
	"github.com/churon/churon/app/models"
	"github.com/churon/churon/models/download"
	"github.com/churon/churon/models/hub"
)

// Describe is the one place an error becomes words for people: a headline
// in the UI's language, from the error's type, and the technical chain
// for Details ("" when the headline is all there is to say). An error the
// UI does not know keeps its own text as the headline.
func Describe(err error) (headline, details string) {
	if err == nil {
		return "", ""
	}
	details = err.Error()
	var (
		load       *session.LoadError
		missing    *models.MissingFileError
		incomplete *models.IncompleteError
		variant    *models.NoVariantError
		netErr     net.Error
		pathErr    *fs.PathError
	)
	switch {
	case errors.Is(err, session.ErrNoModel):
		return lang.X("error.no_model", "No model is loaded. Open a GGUF file first."), ""
	case errors.Is(err, session.ErrTooLong):
		return lang.X("error.too_long", "This conversation no longer fits in the context. Raise the context length in the chat settings, or start a new chat."), ""
	case errors.Is(err, session.ErrBusy):
		return lang.X("error.busy", "This chat is still answering. Stop it first."), ""
	case errors.As(err, &load):
		return loadHeadline(load), details
	case errors.Is(err, hub.ErrUnauthorized), errors.Is(err, hub.ErrRateLimited), errors.Is(err, hub.ErrNotFound):
		return HubError(err), details
	case errors.Is(err, download.ErrChecksum):
		return lang.X("error.checksum", "The downloaded file is damaged (its checksum does not match) — download it again."), details
	case errors.Is(err, download.ErrInsufficientSpace), errors.Is(err, download.ErrDiskFull):
		return lang.X("error.disk_full", "There is not enough free disk space for this model. Free some space, then try again."), details
	case errors.As(err, &missing):
		return lang.X("models.missing_file", "{{.Repo}} no longer has {{.File}}.", map[string]any{"Repo": missing.Repo, "File": missing.File}), details
	case errors.As(err, &incomplete):
		return lang.X("models.incomplete", "{{.Name}} is missing parts on the hub.", map[string]any{"Name": incomplete.Name}), details
	case errors.As(err, &variant) && len(variant.Have) == 0:
		return lang.X("error.no_gguf", "{{.Repo}} has no GGUF files Churon can run.", map[string]any{"Repo": variant.Repo}), details
	case errors.As(err, &pathErr) && errors.Is(err, fs.ErrNotExist):
		return lang.X("error.file_missing", "{{.Name}} is not there any more: it was moved or deleted. Open it where it is now.",
			map[string]any{"Name": ModelLabel(pathErr.Path)}), details
	case errors.As(err, &pathErr) && errors.Is(err, fs.ErrPermission):
		return lang.X("error.file_denied", "Churon is not allowed to use {{.Name}}. Check the permissions of the file and its folder.",
			map[string]any{"Name": ModelLabel(pathErr.Path)}), details
	case errors.As(err, &pathErr):
		// A file's trouble, whatever its errno: never "offline" (a file
		// error's errno also satisfies net.Error).
		return err.Error(), ""
	case errors.As(err, &netErr), errors.Is(err, download.ErrGaveUp):
		// The hub is the only place Churon reaches over the network.
		return lang.X("error.offline", "Can't reach Hugging Face — you seem to be offline. Check this computer's internet connection, then try again."), details
	}
	return err.Error(), ""
}

// ErrorText is Describe's headline alone, for a status line with no room
// for Details.
func ErrorText(err error) string {
	msg, _ := Describe(err)
	return msg
}

// loadHeadline words a model that failed to load.
func loadHeadline(e *session.LoadError) string {
	name := ModelLabel(e.Path)
	switch e.Kind {
	case session.LoadIncomplete:
		if e.Want > e.Have && e.Have > 0 {
			return lang.X("error.load.incomplete", "{{.Name}} is incomplete ({{.Have}} of {{.Want}}) — download it again.",
				map[string]any{"Name": name, "Have": FormatBytes(e.Have), "Want": FormatBytes(e.Want)})
		}
		return lang.X("error.load.incomplete_unknown", "{{.Name}} is incomplete — download it again.", map[string]any{"Name": name})
	case session.LoadNotModel:
		return lang.X("error.load.not_model", "{{.Name}} is not a model: Churon opens GGUF model files.", map[string]any{"Name": name})
	case session.LoadUnsupported:
		return lang.X("error.load.unsupported", "{{.Name}} is a “{{.Arch}}” model, which Churon cannot run yet. Churon runs {{.Supported}}.",
			map[string]any{"Name": name, "Arch": e.Arch, "Supported": strings.Join(e.Supported, ", ")})
	case session.LoadOutOfMemory:
		return lang.X("error.load.memory", "There is not enough memory to load {{.Name}}. Close other programs, or choose a smaller model or quantization.", map[string]any{"Name": name})
	}
	return e.Error()
}

// ListStatus is the line over a list just read: failed(err) when reading
// it failed, else empty when it came back empty, else some (which says
// how many there are, or how to use them).
func ListStatus(err error, failed func(error) string, n int, empty, some string) string {
	switch {
	case err != nil:
		return failed(err)
	case n == 0:
		return empty
	}
	return some
}
