package export

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
)

// writeDocument writes doc as json.Encoder with a two-space indent and no
// HTML escaping writes it, byte for byte, but a conversation at a time:
// encoding a library of thousands of chats whole builds the document
// twice over in one growing buffer (the text, then its indented copy),
// which cost more than reading the chats from the database.
func writeDocument(w io.Writer, doc Document) error {
	convs := doc.Conversations
	doc.Conversations = []Conversation{}
	var head bytes.Buffer
	if err := encoder(&head, "").Encode(doc); err != nil {
		return err
	}
	// The document ends `"conversations": []` + "\n}\n": the
	// conversations go between the brackets.
	h := head.Bytes()
	at := bytes.LastIndex(h, []byte("[]"))
	if at < 0 {
		return errors.New("no conversations array in the document")
	}
	if len(convs) == 0 {
		_, err := w.Write(h)
		return err
	}
	if _, err := w.Write(h[:at+1]); err != nil {
		return err
	}
	var buf bytes.Buffer
	// Inside the array, two levels down: what the whole document's
	// encoder would put before each line.
	enc := encoder(&buf, "    ")
	for i := range convs {
		buf.Reset()
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.WriteString("\n    ")
		if err := enc.Encode(convs[i]); err != nil {
			return err
		}
		buf.Truncate(buf.Len() - 1) // Encode's newline
		if _, err := w.Write(buf.Bytes()); err != nil {
			return err
		}
	}
	if _, err := io.WriteString(w, "\n  "); err != nil {
		return err
	}
	_, err := w.Write(h[at+1:])
	return err
}

func encoder(w io.Writer, prefix string) *json.Encoder {
	enc := json.NewEncoder(w)
	enc.SetIndent(prefix, "  ")
	enc.SetEscapeHTML(false)
	return enc
}
