// Package session is the channel-based session manager between the UI (or
// `churon chat`) and the engine: it owns the loaded model, one KV cache per
// conversation, the schedule of answers and their cancellation, and it
// writes every message to the store. It imports no UI toolkit.
//
// # Commands and events
//
// Commands are methods — Send, Stop, Regenerate, Edit, Delete, Undo,
// LoadModel, UnloadModel, NewConversation, Rename, SetPinned, SetSettings.
// Each is handed to the one goroutine that owns the schedule and returns
// as soon as that goroutine has accepted or refused it, so the UI never
// waits on the engine. Everything that follows arrives, in order, on
// Events: Token, Stats, Done, Queued, Error, ModelLoading, ModelLoaded,
// ModelUnloaded, MessageAdded, MessagesChanged, ConversationChanged,
// CacheState. Queries — ListConversations, Trash, Conversation, Messages,
// Search, Settings, Status, CacheState, KVBudget, KVDiskUsage — may be
// called anywhere.
//
//	m := session.New(st, session.Options{})
//	go func() {
//		for ev := range m.Events() {
//			switch e := ev.(type) {
//			case session.Token:
//				// append e.Text to message e.Msg
//			case session.Done:
//				// e.Reason: eos, stop, length, context, cancelled or error
//			}
//		}
//	}()
//	m.LoadModel("model.gguf")
//	c, _ := m.NewConversation("")
//	m.Send(c.ID, "안녕하세요")
//
// # Scheduling
//
// One goroutine owns the schedule: it decides which answers run, and the
// loaded model's Batch runs them together (continuous batching). Each
// step decodes one token for every answer that is generating, all in one
// forward pass, so the weights are read once a step for the whole batch —
// decoding is bound by memory bandwidth, and four answers together cost
// little more than one. A new answer's prompt is fed in chunks between
// the others' decode steps, each chunk sized from the measured cost of a
// step — measured by the rows it runs — so that a step with one takes at
// most three quarters longer than one without (PrefillSlack,
// Options.Prefill): nobody's time between tokens doubles for another's
// long prompt, and the prompt still gets its share. One step in fifty at
// most (over time; up to three in a row after a quiet spell, BurstCap)
// may be a burst: up to four times a decode step (BurstShare,
// BurstSlack), or short waiting prompts fed whole, up to BurstTokens
// between them, so that short prompts arriving together start at once
// even where the CPU is the limit and a prompt token costs a decode row. An answer leaves the batch the step it ends.
//
// Up to a cap run at once: SettingMaxAnswers, by default as many KV
// caches at the default context as a quarter of the available memory
// holds, at most 16 (DefaultMaxAnswers). Beyond it an answer waits
// (Queued), and the next to start is the oldest of the source — the
// window, or an API client — with the fewest answers running, so that a
// client's flood of requests never starves the window. Sampling, stop
// strings, seeds and KV caches are each answer's own, and so are its
// tokens: an answer is the same, bit for bit, whatever runs beside it
// and however its prompt is split — except on CPUs with AMX, where a
// step of 16 rows or more (a prompt chunk beside it, or 16 answers) runs
// its matrix products on tile kernels and can change the last bits of
// its logits (engine.Model.Step; CHURON_NOAMX=1 restores equality).
//
// The person can switch conversations, start a new one and type while
// answers run. A conversation has at most one answer running or waiting;
// Send, Regenerate and Edit on it are refused with ErrBusy until its
// Done. Stop cancels the answer's context, and the batch checks it before
// every step: the answer ends within one token, its text so far is saved
// with reason "cancelled", and the others go on. API requests (Answer)
// run in the same batch, under the same cap. Exclusive holds the machine
// for someone who measures (the Compare page): no answer starts and the
// batch stands still until it is released. LoadModel and UnloadModel
// first cancel every answer, then swap the model once all have stopped.
//
// # Reusing the KV cache
//
// Each conversation keeps its engine.Sequence between answers. Before an
// answer the whole conversation is rendered with the model's chat template
// and tokenized; the longest common prefix with the tokens the cache holds
// is kept (Truncate) and only the rest is fed, so a follow-up costs its
// own tokens, and a regenerated or edited turn costs what follows the
// change. The prompt is always the fresh rendering of the stored
// conversation, never the tokens an answer was generated as: a cache can
// save time but never change an answer. A real model's answer tokenizes
// back to the tokens it was generated as, so the whole answer is reused;
// only its end-of-turn markup and the new message are processed.
//
// Idle caches share a memory budget (Options.KVBudget, else SetKVBudget's
// stored value, else DefaultKVBudget: a quarter of the available memory).
// With Options.Disk, a snapshot of a conversation's cache is written after
// every answer, in the background (a follow-up in that conversation waits
// for it, the rest does not), so a killed process loses at most the cache
// of the answer it was writing; it is also written, if not yet, before the
// model is unloaded or switched and when the manager closes. Over budget,
// the least recently used caches are dropped from memory once their
// snapshot is on disk; the disk has its own budget (app/kvcache). A
// conversation with no cache in memory reads its snapshot back before its
// answer; one that does not match the model, or is damaged, is deleted and
// logged (Options.Logger), and the answer is processed cold. CacheState
// events and the CacheState query say where a conversation's cache is.
//
// # Context overflow
//
// When the conversation and room for the answer exceed the context,
// OverflowDrop (the default) leaves the oldest whole turns out of the
// prompt, keeping the system prompt and the newest turns, and stores a
// notice (a message with role store.RoleNotice, never part of a prompt)
// that the chat shows; OverflowStop refuses with ErrTooLong. Stats.Dropped
// says how many messages the model did not see.
//
// # Durability
//
// The person's message is stored before Send returns. An answer is created
// empty when it starts (MessageAdded), saved every Options.CommitEvery
// (one second) by a separate goroutine so a slow disk never delays a
// token, and saved with its statistics and finish reason when it ends,
// before Done is sent. Messages returns a streaming answer with its live
// text.
//
// # Remote models
//
// With Options.Remote (app/remote's connections), LoadModel also takes a
// model served elsewhere, "remote:CONN/MODEL" (RemotePath): nothing
// loads here; each answer sends the conversation — the system prompt and
// the turns, as messages, for the server's own chat template — and
// streams the reply, behind the same commands and events as a local
// model's (Send, Stop, Regenerate, Edit; Token, Stats, Done). Answers are
// stored with Model set to the path, so history and exports say which
// connection and model answered. When the server fails part-way, what
// arrived is kept, the answer ends with ReasonError and its error line is
// stored with it (RemoteError). KV caches, snapshots and the batch are a
// local model's only; up to four remote answers run at once (the server
// queues the rest), and API requests (serve/) are refused while a remote
// model is loaded.
//
// # Back-pressure
//
// Events are never dropped. The manager never blocks on the consumer
// either: events queue in an outbox, and while the consumer lags, Token
// events of an answer merge into one larger Token (Offset tells where its
// text starts), so a slow UI receives fewer, bigger updates instead of
// slowing generation. The consumer must drain Events until it is closed.
package session
