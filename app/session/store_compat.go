package session

import "github.com/churon/churon/app/store"

// Store is the database. TEMPORARY: removed once ui/ uses the manager's
// own commands (house issue); nothing new may call it.
func (m *Manager) Store() *store.Store { return m.st }
