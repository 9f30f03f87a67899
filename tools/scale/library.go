package main

import (
	"archive/zip"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"time"

	"github.com/churon/churon/app/export"
	"github.com/churon/churon/internal/synthchat"
)

// spec is the synthetic library: Convs conversations of Msgs messages,
// and one long chat of Long messages, the most recently updated.
type spec struct {
	Convs, Msgs, Long int
	Seed              uint64
}

// LongTitle is the long chat's title, by which the benchmark opens it.
const LongTitle = "A very long chat"

// writeZip writes the library as a zip of JSON exports, a thousand
// conversations each (one file would pass the import's size limit for the
// larger libraries), which Churon's own import reads.
func writeZip(w io.Writer, sp spec) error {
	r := rand.New(rand.NewPCG(sp.Seed, 0x5ca1e))
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	zw := zip.NewWriter(w)
	var doc export.Document
	part := 0
	flush := func() error {
		if len(doc.Conversations) == 0 {
			return nil
		}
		part++
		f, err := zw.Create(fmt.Sprintf("chats-%03d.json", part))
		if err != nil {
			return err
		}
		enc := json.NewEncoder(f)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(doc); err != nil {
			return err
		}
		doc.Conversations = doc.Conversations[:0]
		return nil
	}
	doc = export.Document{Format: export.FormatID, Version: export.Version, Generator: "churon scale benchmark"}
	add := func(title string, created time.Time, n int) {
		c := export.Conversation{Title: title, Created: created, SystemPrompt: ""}
		t := created
		for j := range n {
			role := "user"
			if j%2 == 1 {
				role = "assistant"
			}
			t = t.Add(time.Duration(5+r.IntN(120)) * time.Second)
			c.Messages = append(c.Messages, export.Message{Role: role, Content: synthchat.Message(r), Created: t, Updated: t})
		}
		c.Updated = t
		doc.Conversations = append(doc.Conversations, c)
	}
	for i := range sp.Convs {
		title := fmt.Sprintf("Chat %d: %s", i+1, synthchat.Words(r, 3+r.IntN(4), r.IntN(3) == 0))
		add(title, start.Add(time.Duration(i)*37*time.Minute), sp.Msgs)
		// A few pinned, as people pin: they head the list.
		doc.Conversations[len(doc.Conversations)-1].Pinned = i%2000 == 1
		if len(doc.Conversations) == 1000 {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if sp.Long > 0 {
		add(LongTitle, start.Add(time.Duration(sp.Convs+1)*37*time.Minute), sp.Long)
	}
	if err := flush(); err != nil {
		return err
	}
	return zw.Close()
}
