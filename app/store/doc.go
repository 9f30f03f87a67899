// Package store keeps Churon's chat history in an embedded SQLite database
// (modernc.org/sqlite: SQLite translated to Go, so no C toolchain is
// needed and the binary stays static).
//
// The database lives at paths.Database() ($CHURON_HOME/data/churon.db, or
// churon/churon.db in the XDG data folder). It holds conversations (title,
// pin, system prompt, sampler settings, model), their messages (role,
// content, model and quantization, sampler settings, token counts, time to
// first token, prompt and generation speed, prompt tokens reused from the
// KV cache, finish reason; notices from Churon have role "notice" and keep
// their details as JSON in the sampler column), saved quantization
// comparisons (app/compare's result as one JSON document) and app
// settings (key/value).
//
// # Durability
//
// The file is in WAL mode with synchronous=FULL: a write that returned is
// on disk, and a process killed at any instant leaves a database that
// opens with every committed transaction intact (the crash test kills a
// writer with SIGKILL mid-stream to check it). A streamed answer is
// created with AppendAssistant, grown with UpdateMessage (app/session
// commits at least once a second) and closed with FinishMessage; an answer
// whose writer died keeps an empty FinishReason and the text of its last
// commit.
//
// # Schema versions
//
// Migrations are ordered Go values in migrate.go, applied one per
// transaction; the version is in the table schema_version. A database from
// a newer build is refused with ErrSchemaTooNew rather than misread.
//
// # Search in Korean and English
//
// Full-text search uses an FTS5 index with the trigram tokenizer. The
// default unicode61 tokenizer splits text at spaces and punctuation, which
// suits English but not Korean: a Korean word carries its particles
// (김치찌개를 = 김치찌개 + 를), so a search for "김치" or "김치찌개" would
// never match the token "김치찌개를". Trigram indexes every three-character
// window instead, so any substring of three or more characters matches, in
// any script, case-insensitively. Terms of one or two characters (many
// Korean words: 김치, 사과) cannot be answered from trigrams; Search
// answers them with LIKE over the rows, which is exact and, at the size of
// a person's chat history, fast enough. The index is an external-content
// table over messages.content kept in step by triggers, so the text is not
// stored twice.
//
// # Deleting
//
// DeleteConversation moves a conversation to the trash (deleted_at): it
// leaves lists and search at once, RestoreConversation undoes it, and
// PurgeDeleted removes trashed conversations and their messages for good.
//
// # Import
//
// Import adds conversations from elsewhere (app/export reads them from a
// JSON export) in batches of transactions, each conversation whole with its
// messages, keeping their timestamps and every generation field; a write
// of the same process waits for a batch, not the whole import (gate.go),
// and an import cut short keeps the batches it committed. A conversation already in the library — same creation
// millisecond, and one history a prefix of the other — is skipped or, when
// the imported one is longer, extended with the turns it lacks: importing
// the same file twice never duplicates a chat. The import fills the
// full-text index once at each batch's end, not row by row
// (import_index.go).
//
// # Pages
//
// Lists that may be long are read a page at a time (pages.go), so that a
// window's cost follows what it shows, not the size of the library:
// ConversationPage walks the conversations_listed index from a cursor (no
// OFFSET: the hundredth page costs what the first does), and
// SearchConversations returns the conversations whose title or messages
// match, each once, reading the newest messages first from the index (or,
// for terms too short for trigrams, a window of ids a page) and bounding
// the work of each page. tools/scale measures them on 10,000 chats.
//
// A Store is safe for concurrent use, and several processes may share the
// file (the desktop app and `churon chat`).
//
//	st, err := store.OpenDefault(ctx)
//	c, err := st.CreateConversation(ctx, store.Conversation{Title: "Recipes"})
//	_, err = st.AddMessage(ctx, store.Message{ConversationID: c.ID, Role: store.RoleUser, Content: "김치찌개 만드는 법"})
//	hits, err := st.Search(ctx, "김치", 20)
package store
