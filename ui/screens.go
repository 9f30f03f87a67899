package ui

import (
	"github.com/churon/churon/ui/chat"
	"github.com/churon/churon/ui/compare"
	"github.com/churon/churon/ui/core"
	"github.com/churon/churon/ui/models"
)

// Screens are the window's parts as they are now: what the screens share
// and the screens themselves (the window makes the chat's again when the
// language changes). The screens' own tests reach them so, through
// ui/internal/uitest: their packages cannot import this one's tests.
type Screens struct {
	Core     *core.Window
	Chat     *chat.View
	Composer *chat.Composer
	Models   *models.State
	Compare  *compare.Screen
}

// Screens hands out the window's parts (see Screens).
func (u *UI) Screens() Screens {
	return Screens{Core: u.w, Chat: u.chat, Composer: u.composer, Models: u.mdl, Compare: u.compare}
}
