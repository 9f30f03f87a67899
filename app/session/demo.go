package session

import (
	"context"
	"encoding/json"
	"fmt"

	api "github.com/churon/churon/app/api/session"
	"github.com/churon/churon/app/store"
	"github.com/churon/churon/assets/demo"
	"github.com/churon/churon/engine"
)

// demoNoticeText is the notice's English words, for exports and readers
// that do not word notices themselves (the window words it in the
// person's language).
const demoNoticeText = "This chat uses Churon's built-in demo model, stories260K: 260 thousand parameters trained on children's stories. " +
	"It writes short English stories and nothing else — start a story (\"Once upon a time\") and watch it stream. " +
	"Real answers, and Korean, need a real model: download one or open a GGUF file."

// demoMaxTokens caps a demo chat's answers (a setting the person can
// change).
const demoMaxTokens = 200

// loadEngine opens a model for the manager: the built-in demo from the
// program's memory, anything else from its file.
func loadEngine(ctx context.Context, path string, opt engine.LoadOptions) (*engine.Model, error) {
	if demo.IsPath(path) {
		return engine.LoadMemory(ctx, api.DemoPath, demo.Bytes(), opt)
	}
	return engine.Load(ctx, path, opt)
}

// StartDemo loads the built-in demo model, unless it is loaded or loading
// already, and makes a conversation that opens with a notice saying what
// the demo is. Its first answer waits for the load like any other.
func (m *Manager) StartDemo() (api.Conversation, error) {
	var c api.Conversation
	err := m.call(func() error {
		if m.s.closing {
			return api.ErrClosed
		}
		s := &m.s
		loaded := s.model != nil && demo.IsPath(s.model.Info().Path)
		loading := (s.loading != nil && demo.IsPath(s.loading.path)) || (s.want != nil && demo.IsPath(s.want.path))
		if !loaded && !loading {
			m.requestModel(api.DemoPath)
		}
		set := m.defaults
		// A story model writes on until its context is full; a story's
		// length is a better demonstration.
		if set.MaxTokens == 0 || set.MaxTokens > demoMaxTokens {
			set.MaxTokens = demoMaxTokens
		}
		var err error
		if c, err = m.newConversation("", set); err != nil {
			return err
		}
		meta, _ := json.Marshal(api.Notice{Kind: api.NoticeDemo})
		msg, err := m.st.AddMessage(context.Background(), store.Message{ConversationID: c.ID, Role: store.RoleNotice, Content: demoNoticeText, Sampler: string(meta)})
		if err != nil {
			return fmt.Errorf("session: demo: %w", err)
		}
		m.emit(api.MessageAdded{Message: msg})
		return nil
	})
	return c, err
}
