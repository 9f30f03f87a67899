package session

import (
	"encoding/json"

	"github.com/churon/churon/app/store"
	"github.com/churon/churon/assets/demo"
)

// NoticeDropped is the kind of notice stored when the oldest turns of a
// conversation stop fitting in the context.
const NoticeDropped = "context_dropped"

// Notice is what a notice message (role store.RoleNotice) says, kept as
// JSON in the message's Sampler field so the chat can word it in the
// person's language.
type Notice struct {
	Kind string `json:"kind"`
	// Dropped: the first Dropped messages of the conversation (not counting
	// notices) are no longer in the prompt; FirstKept is the first one that
	// is.
	Dropped   int   `json:"dropped"`
	FirstKept int64 `json:"first_kept"`
}

// ParseNotice reads a notice message's details; ok is false for other
// messages.
func ParseNotice(m Message) (n Notice, ok bool) {
	if m.Role != store.RoleNotice || json.Unmarshal([]byte(m.Sampler), &n) != nil || n.Kind == "" {
		return Notice{}, false
	}
	return n, true
}

// DemoPath names the built-in demo model (assets/demo) wherever a model's
// path is expected: LoadModel takes it, and conversations with the demo
// record it. It is no file's path.
const DemoPath = demo.Path

// NoticeDemo is the kind of notice that opens a conversation with the
// built-in demo model: what the model is, and that real answers need a
// real model.
const NoticeDemo = "demo_model"

// IsDemo reports whether path names the built-in demo model.
func IsDemo(path string) bool { return demo.IsPath(path) }
