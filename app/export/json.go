package export

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/churon/churon/app/store"
)

// FormatID is the value of a JSON export's "format" field: it tells a
// Churon chat export from any other JSON file.
const FormatID = "churon-chats"

// Version is the JSON format version this build writes, and the newest it
// reads. docs/export-format.md describes each version. A change that an
// older reader would misread (a field whose meaning changes, a required
// new field) bumps it; new optional fields do not, since readers ignore
// fields they do not know.
const Version = 1

// Document is the JSON export: an object with the format's id, its
// version and the conversations.
type Document struct {
	Format        string         `json:"format"`
	Version       int            `json:"version"`
	Generator     string         `json:"generator,omitempty"`
	ExportedAt    time.Time      `json:"exported_at,omitzero"`
	Conversations []Conversation `json:"conversations"`
}

// Conversation is one chat in the JSON export.
type Conversation struct {
	// ID is the conversation's id in the library it was exported from:
	// information only, import assigns new ids.
	ID      int64     `json:"id,omitempty"`
	Title   string    `json:"title"`
	Created time.Time `json:"created,omitzero"`
	Updated time.Time `json:"updated,omitzero"`
	Pinned  bool      `json:"pinned"`
	// SystemPrompt and Settings are the conversation's own generation
	// settings; Settings is app/session's settings object.
	SystemPrompt string          `json:"system_prompt"`
	Settings     json.RawMessage `json:"settings,omitempty"`
	// SettingsText holds stored settings that are not a compact JSON
	// object, byte for byte (never written by Churon itself; kept so
	// that nothing is lost).
	SettingsText string    `json:"settings_text,omitempty"`
	ModelPath    string    `json:"model_path,omitempty"`
	Messages     []Message `json:"messages"` // the branch shown
	// OtherVersions are the messages off that branch — earlier versions
	// of edited messages and regenerated answers, with what followed
	// them — least recently shown first; each names its parent.
	OtherVersions []Message `json:"other_versions,omitempty"`
}

// Message is one message in the JSON export. The fields after Updated are
// set on answers only; absent means zero.
type Message struct {
	// ID is the message's id in the library it came from: information
	// only, except that Parent refers to it.
	ID int64 `json:"id,omitempty"`
	// Parent is the id of the message this one follows, in other_versions
	// (0: it opens the conversation); in messages each follows the one
	// before it.
	Parent int64 `json:"parent,omitempty"`
	// Version of Versions, for a message that has other versions:
	// information only (the tree says it).
	Version      int             `json:"version,omitempty"`
	Versions     int             `json:"versions,omitempty"`
	Role         string          `json:"role"`
	Content      string          `json:"content"`
	Created      time.Time       `json:"created,omitzero"`
	Updated      time.Time       `json:"updated,omitzero"`
	Model        string          `json:"model,omitempty"`
	Quant        string          `json:"quant,omitempty"`
	Settings     json.RawMessage `json:"settings,omitempty"`
	SettingsText string          `json:"settings_text,omitempty"`
	PromptTokens int             `json:"prompt_tokens,omitempty"`
	PromptReused int             `json:"prompt_reused,omitempty"` // of PromptTokens, taken from the KV cache
	GenTokens    int             `json:"gen_tokens,omitempty"`
	TTFTMs       float64         `json:"ttft_ms,omitempty"`
	PromptTPS    float64         `json:"prompt_tps,omitempty"`
	GenTPS       float64         `json:"gen_tps,omitempty"`
	FinishReason string          `json:"finish_reason,omitempty"`
	// Reasoning is an answer's thinking, apart from its content, with
	// the tokens and milliseconds it took.
	Reasoning       string  `json:"reasoning,omitempty"`
	ReasoningTokens int     `json:"reasoning_tokens,omitempty"`
	ReasoningMs     float64 `json:"reasoning_ms,omitempty"`
}

// NewDocument converts chats to the JSON document.
func NewDocument(chats []Chat, opt Options) Document {
	doc := Document{Format: FormatID, Version: Version, Generator: opt.Generator,
		ExportedAt: opt.now().UTC().Truncate(time.Millisecond), Conversations: make([]Conversation, 0, len(chats))}
	for _, ch := range chats {
		c := ch.Conversation
		jc := Conversation{ID: c.ID, Title: c.Title, Created: utc(c.Created), Updated: utc(c.Updated), Pinned: c.Pinned,
			SystemPrompt: c.SystemPrompt, ModelPath: c.ModelPath, Messages: make([]Message, 0, len(ch.Messages))}
		jc.Settings, jc.SettingsText = settingsOut(c.Sampler)
		for _, m := range ch.Messages {
			jc.Messages = append(jc.Messages, messageOut(m, false))
		}
		for _, m := range ch.Others {
			jc.OtherVersions = append(jc.OtherVersions, messageOut(m, true))
		}
		doc.Conversations = append(doc.Conversations, jc)
	}
	return doc
}

func messageOut(m store.Message, other bool) Message {
	jm := Message{ID: m.ID, Role: string(m.Role), Content: m.Content, Created: utc(m.Created), Updated: utc(m.Updated),
		Model: m.Model, Quant: m.Quant, PromptTokens: m.PromptTokens, PromptReused: m.PromptReused, GenTokens: m.GenTokens,
		TTFTMs: float64(m.TTFT) / float64(time.Millisecond), PromptTPS: m.PromptTPS, GenTPS: m.GenTPS,
		FinishReason: m.FinishReason,
		Reasoning:    m.Reasoning, ReasoningTokens: m.ReasoningTokens, ReasoningMs: reasoningMs(m.ReasoningTime)}
	if other {
		jm.Parent = m.ParentID
	}
	if m.Versions > 1 {
		jm.Version, jm.Versions = m.Version, m.Versions
	}
	jm.Settings, jm.SettingsText = settingsOut(m.Sampler)
	return jm
}

func utc(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return t.UTC()
}

// settingsOut embeds stored settings as a JSON object when they are one
// (and compact, as app/session writes them, so that reading them back
// gives the same bytes); anything else is kept as text.
func settingsOut(s string) (json.RawMessage, string) {
	if s == "" {
		return nil, ""
	}
	var buf bytes.Buffer
	if json.Compact(&buf, []byte(s)) == nil && buf.String() == s && s[0] == '{' {
		return json.RawMessage(s), ""
	}
	return nil, s
}

// settingsIn is the inverse of settingsOut.
func settingsIn(raw json.RawMessage, text string) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return text, nil
	}
	if text != "" {
		return "", errors.New(`both "settings" and "settings_text" are set`)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return "", err
	}
	if buf.Len() == 0 || buf.Bytes()[0] != '{' {
		return "", errors.New(`"settings" is not an object`)
	}
	return buf.String(), nil
}

// WriteJSON writes chats as one JSON document (indented, UTF-8, with <, >
// and & left as they are so that the text stays readable), a
// conversation at a time (json_stream.go).
func WriteJSON(w io.Writer, chats []Chat, opt Options) error {
	if err := writeDocument(w, NewDocument(chats, opt)); err != nil {
		return fmt.Errorf("export: json: %w", err)
	}
	return nil
}

// MaxImportSize bounds a file Import reads (and each JSON file in a zip):
// far beyond any chat history, small enough not to exhaust memory.
const MaxImportSize = 256 << 20

// Decode reads and checks a JSON export. Errors wrap ErrMalformed (with
// the line and column of a syntax error, or the conversation and message
// at fault) or ErrVersion.
func Decode(r io.Reader) (*Document, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxImportSize+1))
	if err != nil {
		return nil, fmt.Errorf("export: read: %w", err)
	}
	if len(data) > MaxImportSize {
		return nil, fmt.Errorf("%w: larger than %d MiB", ErrMalformed, MaxImportSize>>20)
	}
	return decode(data)
}

func decode(data []byte) (*Document, error) {
	// One pass over the file in the usual case: the whole document, its
	// head checked from what it holds. Only a document that fails to
	// decode, or whose head is not that of a file this build reads, has
	// its head read apart, to tell a newer version (which may not fit
	// this build's types: "update Churon" is the useful answer, not a type
	// error) from a damaged file.
	var doc Document
	err := json.Unmarshal(data, &doc)
	if err != nil || doc.Format != FormatID || doc.Version < 1 || doc.Version > Version || doc.Conversations == nil {
		if herr := checkHead(data); herr != nil {
			return nil, herr
		}
		if err != nil {
			return nil, jsonError(data, err)
		}
	}
	for i, c := range doc.Conversations {
		if _, err := settingsIn(c.Settings, c.SettingsText); err != nil {
			return nil, fmt.Errorf("%w: conversation %d (%q): %v", ErrMalformed, i+1, c.Title, err)
		}
		if err := checkVersions(c); err != nil {
			return nil, fmt.Errorf("%w: conversation %d (%q): %v", ErrMalformed, i+1, c.Title, err)
		}
		for j, m := range append(c.Messages[:len(c.Messages):len(c.Messages)], c.OtherVersions...) {
			switch store.Role(m.Role) {
			case store.RoleSystem, store.RoleUser, store.RoleAssistant, store.RoleTool, store.RoleNotice:
			case "":
				return nil, fmt.Errorf("%w: conversation %d (%q), message %d: no \"role\"", ErrMalformed, i+1, c.Title, j+1)
			default:
				return nil, fmt.Errorf("%w: conversation %d (%q), message %d: unknown role %q (want system, user, assistant, tool or notice)",
					ErrMalformed, i+1, c.Title, j+1, m.Role)
			}
			if _, err := settingsIn(m.Settings, m.SettingsText); err != nil {
				return nil, fmt.Errorf("%w: conversation %d (%q), message %d: %v", ErrMalformed, i+1, c.Title, j+1, err)
			}
			if m.GenTokens < 0 || m.PromptTokens < 0 || m.PromptReused < 0 || m.PromptReused > m.PromptTokens || m.TTFTMs < 0 ||
				m.ReasoningTokens < 0 || m.ReasoningMs < 0 {
				return nil, fmt.Errorf("%w: conversation %d (%q), message %d: negative token count or time, or more prompt tokens reused than the prompt had", ErrMalformed, i+1, c.Title, j+1)
			}
		}
	}
	return &doc, nil
}

// checkHead checks a document's head: its format (when it says one),
// its version (a whole number this build reads) and its list of
// conversations.
func checkHead(data []byte) error {
	var head struct {
		Format        *string         `json:"format"`
		Version       json.RawMessage `json:"version"`
		Conversations json.RawMessage `json:"conversations"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return jsonError(data, err)
	}
	if head.Format != nil && *head.Format != FormatID {
		return fmt.Errorf("%w: \"format\" is %q, not %q", ErrMalformed, *head.Format, FormatID)
	}
	if len(head.Version) == 0 {
		return fmt.Errorf("%w: no \"version\" field", ErrMalformed)
	}
	var v int
	if err := json.Unmarshal(head.Version, &v); err != nil {
		return fmt.Errorf("%w: \"version\" is %s, not a whole number", ErrMalformed, head.Version)
	}
	if v > Version {
		return fmt.Errorf("%w: the file is format version %d, this build reads up to version %d; update Churon to import it",
			ErrVersion, v, Version)
	}
	if v < 1 {
		return fmt.Errorf("%w: \"version\" %d (versions start at 1)", ErrMalformed, v)
	}
	if len(head.Conversations) == 0 || string(head.Conversations) == "null" {
		return fmt.Errorf("%w: no \"conversations\" list", ErrMalformed)
	}
	return nil
}

// checkVersions checks that each of the other versions names a message of
// the conversation as its parent, by an id no two messages share.
func checkVersions(c Conversation) error {
	if len(c.OtherVersions) == 0 {
		return nil
	}
	ids := map[int64]bool{}
	for j, m := range append(c.Messages[:len(c.Messages):len(c.Messages)], c.OtherVersions...) {
		if m.ID == 0 && j >= len(c.Messages) {
			return fmt.Errorf("other version %d has no \"id\"", j-len(c.Messages)+1)
		}
		if m.ID != 0 && ids[m.ID] {
			return fmt.Errorf("two messages have the id %d", m.ID)
		}
		ids[m.ID] = true
	}
	for j, m := range c.OtherVersions {
		if m.Parent != 0 && !ids[m.Parent] {
			return fmt.Errorf("other version %d follows message %d, which is not in the conversation", j+1, m.Parent)
		}
	}
	return nil
}

// jsonError explains a decoding error with its place in the file.
func jsonError(data []byte, err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		line, col := position(data, se.Offset)
		return fmt.Errorf("%w: line %d, column %d: %v", ErrMalformed, line, col, se)
	case errors.As(err, &te):
		line, col := position(data, te.Offset)
		field := te.Field
		if field == "" {
			field = "the document"
		}
		return fmt.Errorf("%w: line %d, column %d: %s is a JSON %s, want %s", ErrMalformed, line, col, field, te.Value, jsonKind(te.Type.String()))
	}
	return fmt.Errorf("%w: %v", ErrMalformed, err)
}

func jsonKind(goType string) string {
	switch goType {
	case "string":
		return "a string"
	case "int", "int64", "float64":
		return "a number"
	case "bool":
		return "true or false"
	case "time.Time":
		return "a time (RFC 3339)"
	}
	if strings.HasPrefix(goType, "export.") || strings.HasPrefix(goType, "struct") || strings.HasPrefix(goType, "map[") {
		return "an object"
	}
	if strings.HasPrefix(goType, "[]") {
		return "a list"
	}
	return goType
}

// position turns a byte offset into a 1-based line and column.
func position(data []byte, off int64) (line, col int) {
	off = min(max(off, 0), int64(len(data)))
	before := data[:off]
	line = bytes.Count(before, []byte{'\n'}) + 1
	col = int(off) - (bytes.LastIndexByte(before, '\n') + 1)
	if col == 0 {
		col = 1
	}
	return line, col
}

// Chats converts a decoded document to the store's import values.
func (d *Document) Chats() ([]store.ImportConversation, error) {
	out := make([]store.ImportConversation, 0, len(d.Conversations))
	for i, c := range d.Conversations {
		sc, err := settingsIn(c.Settings, c.SettingsText)
		if err != nil {
			return nil, fmt.Errorf("%w: conversation %d: %v", ErrMalformed, i+1, err)
		}
		ic := store.ImportConversation{Conversation: store.Conversation{Title: c.Title, Created: c.Created, Updated: c.Updated,
			Pinned: c.Pinned, SystemPrompt: c.SystemPrompt, Sampler: sc, ModelPath: c.ModelPath}}
		for j, m := range append(c.Messages[:len(c.Messages):len(c.Messages)], c.OtherVersions...) {
			sm, err := settingsIn(m.Settings, m.SettingsText)
			if err != nil {
				return nil, fmt.Errorf("%w: conversation %d, message %d: %v", ErrMalformed, i+1, j+1, err)
			}
			msg := store.Message{ID: m.ID, Role: store.Role(m.Role), Content: m.Content,
				Created: m.Created, Updated: m.Updated, Model: m.Model, Quant: m.Quant, Sampler: sm,
				PromptTokens: m.PromptTokens, PromptReused: m.PromptReused, GenTokens: m.GenTokens, TTFT: time.Duration(math.Round(m.TTFTMs * float64(time.Millisecond))),
				PromptTPS: m.PromptTPS, GenTPS: m.GenTPS, FinishReason: m.FinishReason,
				Reasoning: m.Reasoning, ReasoningTokens: m.ReasoningTokens,
				ReasoningTime: time.Duration(math.Round(m.ReasoningMs * float64(time.Millisecond)))}
			if j < len(c.Messages) {
				ic.Messages = append(ic.Messages, msg)
			} else {
				msg.ParentID = m.Parent
				ic.Others = append(ic.Others, msg)
			}
		}
		out = append(out, ic)
	}
	return out, nil
}

// Import reads a JSON export — or a .zip of them, as WriteZip makes with
// JSON — and adds its conversations to the library (store.Import: in
// batches, each conversation whole; on an error the result lists those
// committed). Nothing is written unless the whole input is valid.
// Conversations already in the library are not duplicated.
func Import(ctx context.Context, st *store.Store, r io.Reader) (store.ImportResult, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxImportSize+1))
	if err != nil {
		return store.ImportResult{}, fmt.Errorf("export: import: read: %w", err)
	}
	if len(data) > MaxImportSize {
		return store.ImportResult{}, fmt.Errorf("export: import: %w: larger than %d MiB", ErrMalformed, MaxImportSize>>20)
	}
	var docs []*Document
	if isZip(data) {
		if docs, err = decodeZip(data); err != nil {
			return store.ImportResult{}, fmt.Errorf("export: import: %w", err)
		}
	} else {
		doc, err := decode(data)
		if err != nil {
			return store.ImportResult{}, fmt.Errorf("export: import: %w", err)
		}
		docs = append(docs, doc)
	}
	var all []store.ImportConversation
	for _, d := range docs {
		cs, err := d.Chats()
		if err != nil {
			return store.ImportResult{}, fmt.Errorf("export: import: %w", err)
		}
		all = append(all, cs...)
	}
	res, err := st.Import(ctx, all)
	if err != nil {
		return res, fmt.Errorf("export: import: %w", err)
	}
	return res, nil
}
