package export

import (
	"cmp"
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/churon/churon/app/store"
)

// Chat is one conversation with its messages, as the store holds them.
type Chat struct {
	Conversation store.Conversation
	Messages     []store.Message // the branch shown
	// Others are the versions off that branch (edits, regenerated
	// answers and what followed them), least recently chosen first. Only
	// the JSON export writes them.
	Others []store.Message
}

// Options tune the human-readable formats. The zero value is the default.
type Options struct {
	// NoMetadata leaves out the line of statistics and sampler settings
	// under each answer (Markdown, HTML, text). JSON always keeps
	// everything.
	NoMetadata bool
	// Location is the time zone dates are shown in; nil means time.Local.
	// JSON always writes UTC.
	Location *time.Location
	// Now is the clock for the export's own timestamp; nil means time.Now.
	Now func() time.Time
	// Generator names the program in the JSON document ("churon 0.1.0");
	// empty leaves it out.
	Generator string
}

func (o Options) loc() *time.Location {
	if o.Location == nil {
		return time.Local
	}
	return o.Location
}

func (o Options) now() time.Time {
	if o.Now == nil {
		return time.Now()
	}
	return o.Now()
}

// Load reads one conversation and its messages from the store.
func Load(ctx context.Context, st *store.Store, id int64) (Chat, error) {
	c, err := st.Conversation(ctx, id)
	if err != nil {
		return Chat{}, fmt.Errorf("export: %w", err)
	}
	ch, err := loadMessages(ctx, st, c)
	if err != nil {
		return Chat{}, fmt.Errorf("export: %w", err)
	}
	return ch, nil
}

// loadMessages reads a conversation's branch shown and its other
// versions.
func loadMessages(ctx context.Context, st *store.Store, c store.Conversation) (Chat, error) {
	msgs, all, err := st.Branches(ctx, c.ID)
	if err != nil {
		return Chat{}, err
	}
	shown := make(map[int64]bool, len(msgs))
	for _, m := range msgs {
		shown[m.ID] = true
	}
	var others []store.Message
	for _, m := range all {
		if !shown[m.ID] {
			others = append(others, m)
		}
	}
	slices.SortStableFunc(others, func(a, b store.Message) int { return cmp.Compare(a.Selected, b.Selected) })
	return Chat{Conversation: c, Messages: msgs, Others: others}, nil
}

// LoadAll reads every conversation not in the trash, in the sidebar's
// order (pinned first, then most recently updated).
func LoadAll(ctx context.Context, st *store.Store) ([]Chat, error) {
	convs, err := st.ListConversations(ctx, store.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	out := make([]Chat, 0, len(convs))
	for _, c := range convs {
		ch, err := loadMessages(ctx, st, c)
		if err != nil {
			return nil, fmt.Errorf("export: %w", err)
		}
		out = append(out, ch)
	}
	return out, nil
}

// untitled is the title shown for a conversation without one (the
// sidebar's word for it).
const untitled = "New chat"

func title(c store.Conversation) string {
	if t := strings.TrimSpace(c.Title); t != "" {
		return t
	}
	return untitled
}

// FileName is a file name for a chat in format f: its title with the
// characters file systems refuse replaced, at most 80 characters, and the
// format's extension. Korean and other scripts are kept.
func FileName(c store.Conversation, f Format) string {
	return safeName(title(c), 80) + f.Ext()
}

// safeName makes s usable as a file name on Windows, macOS and Linux.
func safeName(s string, max int) string {
	var b strings.Builder
	n := 0
	lastDash := false
	for _, r := range s {
		if n >= max {
			break
		}
		switch {
		case unicode.IsSpace(r):
			r = ' '
		case r == utf8.RuneError, unicode.IsControl(r), strings.ContainsRune(`<>:"/\|?*`, r):
			r = '-'
		}
		if r == '-' && lastDash {
			continue
		}
		lastDash = r == '-'
		b.WriteRune(r)
		n++
	}
	// Windows drops trailing dots and spaces; a leading dot hides the file.
	out := strings.Trim(b.String(), " .-")
	if out == "" {
		out = "chat"
	}
	return out
}

// ZipName suggests a name for the archive of all chats exported at t.
func ZipName(t time.Time) string {
	return "churon-chats-" + t.Format("2006-01-02") + ".zip"
}

// modelNames lists the models that answered in a chat, as "file (quant)",
// in order of first use; the conversation's model when no answer names one.
func modelNames(chat Chat) []string {
	var out []string
	seen := map[string]bool{}
	for _, m := range chat.Messages {
		if m.Role != store.RoleAssistant || m.Model == "" {
			continue
		}
		s := modelLabel(m.Model, m.Quant)
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	if len(out) == 0 && chat.Conversation.ModelPath != "" {
		out = append(out, filepath.Base(chat.Conversation.ModelPath))
	}
	return out
}

func modelLabel(model, quant string) string {
	if quant == "" {
		return model
	}
	return model + " (" + quant + ")"
}

// roleName is the heading of a message.
func roleName(m store.Message) string {
	switch m.Role {
	case store.RoleUser:
		return "You"
	case store.RoleAssistant:
		return "Assistant"
	case store.RoleSystem:
		return "System"
	case store.RoleTool:
		return "Tool"
	case store.RoleNotice:
		return "Notice"
	}
	return string(m.Role)
}

// dateFmt is how dates are shown to people.
const dateFmt = "2006-01-02 15:04 -07:00"

func showTime(t time.Time, opt Options) string {
	if t.IsZero() {
		return ""
	}
	return t.In(opt.loc()).Format(dateFmt)
}
