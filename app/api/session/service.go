package session

import (
	"context"
	"io"

	"github.com/churon/churon/app/api/compare"
	"github.com/churon/churon/app/export"
	"github.com/churon/churon/app/store"
)

// Service is the session manager as a front end sees it: the commands it
// sends and the events it reads. app/session's Manager runs it in this
// process on the engine. Every method is safe from any goroutine; those
// that change something return as soon as the command is taken, and what
// follows arrives on Events. A front end that draws must still not call
// them on its drawing goroutine: a command may wait for the database.
type Service interface {
	// Events delivers what happens, in order, until the service closes.
	Events() <-chan Event
	Status() (Status, error)

	// API requests (the OpenAI-compatible server): answered in the same
	// batch as the conversations (see Request, Answer).
	Answer(ctx context.Context, req Request) (Answer, error)
	// Exclusive holds the machine for the caller (the Compare page while it
	// measures): answers wait until release.
	Exclusive(ctx context.Context) (release func(), err error)

	// The model.
	LoadModel(path string) error
	UnloadModel() error
	StartDemo() (Conversation, error)

	// Conversations and their answers.
	NewConversation(title string) (Conversation, error)
	Send(conv int64, text string) (Message, error)
	Stop(conv int64) error
	Regenerate(conv, msg int64) error
	Edit(conv, msg int64, text string) error
	// SwitchVersion shows another version (1-based, oldest first) of an
	// edited message or regenerated answer, with what followed it;
	// version 0: the branch through msg itself.
	SwitchVersion(conv, msg int64, version int) error
	DeleteMessage(conv, msg int64) error
	Delete(conv int64) error
	Undo(conv int64) error
	Rename(conv int64, title string) error
	SetPinned(conv int64, pinned bool) error
	ListConversations() ([]Conversation, error)
	Trash() ([]Conversation, error)
	Conversation(conv int64) (Conversation, error)
	Messages(conv int64) ([]Message, error)
	// MessagePage reads part of the branch shown, for a long chat that
	// opens on its end and reads older messages as they are scrolled to.
	MessagePage(conv int64, q store.PageQuery) (store.MessagePage, error)
	Search(query string, limit int) ([]SearchHit, error)
	Pages

	// A conversation's settings, and those a new one starts with.
	Settings(conv int64) (Settings, error)
	SetSettings(conv int64, set Settings) error
	DefaultSettings() Settings
	CheckSettings(set Settings) error

	// KV caches: the memory and disk budgets, where a chat's cache is.
	CacheState(conv int64) (CacheState, error)
	KVBudget() (bytes int64, set bool)
	SetKVBudget(bytes int64) error
	KVDiskBudget() (bytes int64, set bool)
	SetKVDiskBudget(bytes int64) error
	KVDiskUsage() (files int, bytes int64)
	ClearKVDisk() error

	// The app's settings (read from memory), imports and exports, saved
	// comparisons.
	Setting(key string) (string, bool)
	SetSetting(key, value string) error
	Import(ctx context.Context, r io.Reader) (store.ImportResult, error)
	Export(ctx context.Context, ids []int64) ([]export.Chat, error)
	SaveComparison(ctx context.Context, r *compare.Result) error
	Comparisons(ctx context.Context, limit int) ([]store.Comparison, error)
	Comparison(ctx context.Context, id int64) (*compare.Result, error)
	DeleteComparison(ctx context.Context, id int64) error
}
