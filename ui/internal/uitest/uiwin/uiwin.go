// Package uiwin lets a screen's tests open the whole window: imported
// from an external test file of the screen's package (package chat_test
// imports package ui, which imports package chat; package chat's own
// tests may not), it sets uitest.Open to build the window with ui.New.
package uiwin

import (
	"github.com/churon/churon/ui"
	"github.com/churon/churon/ui/internal/uitest"
)

func init() { uitest.Open = open }

func open(h *uitest.Harness, o uitest.Options) (func() uitest.Screens, func()) {
	var m ui.ModelsOptions
	if l := o.Models; l != nil {
		m = ui.ModelsOptions{HubURL: l.HubURL, Dir: l.Dir, QueueFile: l.QueueFile, Memory: l.Memory,
			Architectures: l.Architectures, Poll: l.Poll, Download: l.Download, Catalog: l.Catalog}
	}
	u := ui.New(h.A, h.W, ui.Options{Session: h.M, Do: h.Post, Discover: uitest.NoModels, FontCheck: uitest.FontsCovered, Models: m})
	screens := func() uitest.Screens {
		s := u.Screens()
		e := s.Composer.Entry()
		return uitest.Screens{Core: s.Core, Chat: s.Chat, Composer: s.Composer, Models: s.Models, Compare: s.Compare,
			Entry: e, EntryText: func() string { return e.Text },
			ChatContent: s.Chat.Content(), ComposerContent: s.Composer.Content()}
	}
	return screens, u.Close
}
