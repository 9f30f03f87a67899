package export

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"
)

// TestWriteDocumentAsWhole: written a conversation at a time, the
// document is byte for byte what encoding it whole gives, with none, one
// or several conversations, versions, settings, Korean and markup.
func TestWriteDocumentAsWhole(t *testing.T) {
	at := time.Date(2026, 3, 1, 9, 30, 0, 123e6, time.UTC)
	conv := func(title string, n int) Conversation {
		c := Conversation{ID: 3, Title: title, Created: at, Updated: at, Pinned: n%2 == 0, SystemPrompt: "be <brief> & kind",
			Settings: json.RawMessage(`{"temperature":0.7}`), ModelPath: "/m/q.gguf"}
		for i := range n {
			c.Messages = append(c.Messages, Message{ID: int64(i + 1), Role: "user", Content: "김치찌개 <b>\n```go\nx := 1\n```", Created: at})
		}
		if n > 1 {
			c.OtherVersions = []Message{{ID: 9, Parent: 1, Role: "assistant", Content: "older", Version: 1, Versions: 2}}
		}
		return c
	}
	for _, convs := range [][]Conversation{nil, {conv("one", 1)}, {conv("a", 0), conv("b", 2), conv("셋", 3)}} {
		doc := Document{Format: FormatID, Version: Version, Generator: "test", ExportedAt: at, Conversations: convs}
		var want bytes.Buffer
		if err := encoder(&want, "").Encode(doc); err != nil {
			t.Fatal(err)
		}
		if convs == nil {
			doc.Conversations = nil // written as [] all the same
			want.Reset()
			d := doc
			d.Conversations = []Conversation{}
			if err := encoder(&want, "").Encode(d); err != nil {
				t.Fatal(err)
			}
		}
		var got bytes.Buffer
		if err := writeDocument(&got, doc); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Errorf("%d conversations:\n got %s\nwant %s", len(convs), got.String(), want.String())
		}
	}
}
