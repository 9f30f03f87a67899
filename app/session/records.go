package session

import (
	"context"
	"fmt"
	"io"
	"sync"

	apicompare "github.com/churon/churon/app/api/compare"
	api "github.com/churon/churon/app/api/session"
	"github.com/churon/churon/app/compare"
	"github.com/churon/churon/app/export"
	"github.com/churon/churon/app/store"
	box "github.com/churon/churon/internal/outbox"
)

// What the front ends keep through the manager besides conversations:
// the app's settings, imported chats, exports and saved comparisons. Every
// write goes through here, so the manager knows of each change and says
// so on Events; nothing reaches the database past it.

// settings is the app's settings held in memory, so that reading one
// never waits on the disk, with a writer that saves changes in order in
// the background.
type settings struct {
	mu     sync.Mutex
	values map[string]string
	writes *box.Worker
}

func (m *Manager) openSettings() {
	vals, err := m.st.Settings(context.Background())
	if err != nil {
		m.log.Warn("session: could not read the settings; using the defaults", "err", err)
		vals = map[string]string{}
	}
	m.set = &settings{values: vals, writes: box.NewWorker()}
}

// closeSettings waits for the writes queued so far.
func (m *Manager) closeSettings() { m.set.writes.Close() }

// Setting returns an app setting (from memory: it never waits on the
// disk).
func (m *Manager) Setting(key string) (string, bool) {
	m.set.mu.Lock()
	defer m.set.mu.Unlock()
	v, ok := m.set.values[key]
	return v, ok
}

// SetSetting sets an app setting. It returns at once: the value is read
// back by Setting from now on, and written to the database in the
// background, in order (an Error event reports a write that failed).
// SettingChanged follows.
func (m *Manager) SetSetting(key, value string) error {
	m.set.mu.Lock()
	m.set.values[key] = value
	m.set.mu.Unlock()
	m.set.writes.Queue(func() {
		if err := m.st.SetSetting(context.Background(), key, value); err != nil {
			m.emit(api.Error{Op: "save setting", Err: fmt.Errorf("session: setting %s: %w", key, err)})
		}
	})
	m.emit(api.SettingChanged{Key: key, Value: value})
	return nil
}

// Import adds the chats of a JSON export (or a zip of them) to the
// library (see export.Import), and says which conversations changed,
// those committed before an error too. It blocks while it reads and
// writes: front ends call it off their drawing goroutine.
func (m *Manager) Import(ctx context.Context, r io.Reader) (store.ImportResult, error) {
	res, err := export.Import(ctx, m.st, r)
	for _, c := range res.Conversations {
		if c.Outcome != store.Skipped {
			m.emit(api.ConversationChanged{Conv: c.ID})
		}
	}
	return res, err
}

// Export reads conversations for export: those of ids, or every one when
// ids is nil. It blocks while it reads.
func (m *Manager) Export(ctx context.Context, ids []int64) ([]export.Chat, error) {
	if ids == nil {
		return export.LoadAll(ctx, m.st)
	}
	var chats []export.Chat
	for _, id := range ids {
		c, err := export.Load(ctx, m.st, id)
		if err != nil {
			return nil, err
		}
		chats = append(chats, c)
	}
	return chats, nil
}

// SaveComparison stores a finished comparison (r.ID is set) and says so
// with ComparisonsChanged. It blocks while it writes.
func (m *Manager) SaveComparison(ctx context.Context, r *apicompare.Result) error {
	if err := compare.Save(ctx, m.st, r); err != nil {
		return err
	}
	m.emit(api.ComparisonsChanged{ID: r.ID})
	return nil
}

// Comparisons lists the saved comparisons, newest first, at most limit.
func (m *Manager) Comparisons(ctx context.Context, limit int) ([]store.Comparison, error) {
	return m.st.ListComparisons(ctx, limit)
}

// Comparison reopens a saved comparison.
func (m *Manager) Comparison(ctx context.Context, id int64) (*apicompare.Result, error) {
	return compare.Load(ctx, m.st, id)
}

// DeleteComparison deletes a saved comparison; ComparisonsChanged follows.
func (m *Manager) DeleteComparison(ctx context.Context, id int64) error {
	if err := m.st.DeleteComparison(ctx, id); err != nil {
		return fmt.Errorf("session: %w", err)
	}
	m.emit(api.ComparisonsChanged{ID: id})
	return nil
}
