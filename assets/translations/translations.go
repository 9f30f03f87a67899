// Package translations embeds the desktop app's UI strings: one JSON file
// per language (en.json, ko.json), a flat object from message key to text
// in the format of Fyne's lang package (go-i18n). Every file has the same
// keys; ui/locale's tests check that, and that every key the UI uses is
// present. fyne.<code>.json holds the strings Fyne's own widgets and
// dialogs ask for (its file dialog, an entry's menu), in Fyne's keys: the
// Korean Fyne lacks, and the English to put back when the language
// changes back.
package translations

import "embed"

// FS holds the translation files at its root.
//
//go:embed *.json
var FS embed.FS
