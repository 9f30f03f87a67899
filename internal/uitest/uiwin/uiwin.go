// Package uiwin lets a screen's tests open the whole window: imported
// from an external test file of the screen's package (package chat_test
// imports package ui, which imports package chat; package chat's own
// tests may not), it sets uitest.Open to build the window with ui.New.
package uiwin

import (
	"github.com/churon/churon/app/compare"
	"github.com/churon/churon/internal/uitest"
	"github.com/churon/churon/ui"
)

func init() { uitest.Open = open }

func open(h *uitest.Harness, o uitest.Options) (func() uitest.Screens, func()) {
	u := ui.New(h.A, h.W, ui.Options{Session: h.M, Compare: compare.Runner{}, Models: h.Models, Remotes: o.Remotes,
		Do: h.Post, Discover: uitest.NoModels})
	screens := func() uitest.Screens {
		s := u.Screens()
		e := s.Composer.Entry()
		return uitest.Screens{Core: s.Core, Chat: s.Chat, Composer: s.Composer, Models: s.Models, Compare: s.Compare,
			Entry: e, EntryText: func() string { return e.Text },
			ChatContent: s.Chat.Content(), ComposerContent: s.Composer.Content()}
	}
	return screens, u.Close
}
