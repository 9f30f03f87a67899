package models

import (
	"fmt"
	"strings"
)

// MissingFileError: the hub no longer has the file a catalog entry names.
type MissingFileError struct{ Repo, File string }

func (e *MissingFileError) Error() string {
	return fmt.Sprintf("%s no longer has %s", e.Repo, e.File)
}

// IncompleteError: a model's parts are not all on the hub.
type IncompleteError struct{ Repo, Name string }

func (e *IncompleteError) Error() string {
	return fmt.Sprintf("%s: %s is missing parts on the hub", e.Repo, e.Name)
}

// NoVariantError: a repository has no GGUF file of the quantization or
// name asked for; Have lists what it has.
type NoVariantError struct {
	Repo, Want string
	Have       []string
}

func (e *NoVariantError) Error() string {
	if len(e.Have) == 0 {
		return fmt.Sprintf("%s has no GGUF files", e.Repo)
	}
	return fmt.Sprintf("%s has no %q; it has: %s", e.Repo, e.Want, strings.Join(e.Have, ", "))
}
