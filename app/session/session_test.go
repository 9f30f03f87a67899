package session

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	api "github.com/churon/churon/app/api/session"
	"github.com/churon/churon/app/store"
	"github.com/churon/churon/engine"
	"github.com/churon/churon/engine/arch"
	"github.com/churon/churon/engine/gguf"
	"github.com/churon/churon/internal/testdata"
)

func TestSendWithoutModel(t *testing.T) {
	f := newFixture(t, Options{})
	conv := f.conv(greedy(8))
	if _, err := f.m.Send(conv, "hello"); !errors.Is(err, api.ErrNoModel) {
		t.Fatalf("Send without a model: %v", err)
	}
	if msgs := f.messages(conv); len(msgs) != 0 {
		t.Fatalf("a refused message was stored: %+v", msgs)
	}
	if err := f.m.Regenerate(conv, 1); !errors.Is(err, api.ErrNoModel) {
		t.Fatalf("Regenerate without a model: %v", err)
	}
}

// TestLoadErrors: a file that cannot load is refused at once, before
// anything is unloaded — the working model stays loaded and answers — and
// the error says why, testably (errors.Is) for the window's wording.
func TestLoadErrors(t *testing.T) {
	good := synthPath(t, "llama")
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, b []byte) string {
		p := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	f := newFixture(t, Options{})
	f.load(good)
	conv := f.conv(greedy(4))
	cases := []struct {
		name string
		path string
		want error
	}{
		{"missing", filepath.Join(t.TempDir(), "missing.gguf"), fs.ErrNotExist},
		{"damaged header", write("bad.gguf", []byte("GGUF but not really")), gguf.ErrUnsupportedVersion},
		{"not a model at all", write("notes.txt", []byte("shopping: eggs, rice, kimchi")), gguf.ErrNotGGUF},
		{"incomplete download", write("part.gguf", data[:len(data)/2]), gguf.ErrTruncated},
		{"unknown architecture", write("zz.gguf", bytes.ReplaceAll(data, []byte("llama"), []byte("zzyzx"))), arch.ErrUnknownArchitecture},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := f.m.LoadModel(c.path)
			if !errors.Is(err, c.want) {
				t.Fatalf("LoadModel: %v; want at once an error that is %v", err, c.want)
			}
			st, _ := f.m.Status()
			if st.Model == nil || st.Model.Path != good || st.Loading != "" {
				t.Fatalf("status after a refused file: %+v; want %s still loaded", st, good)
			}
			if tr := f.send(conv, "hi"); tr.done.Reason == "" {
				t.Fatal("the kept model did not answer")
			}
		})
	}
}

// TestFailedLoadRestoresPrevious: a file that passes the check but fails
// to load once the old model is gone (as out of memory does) loads the
// previous model again, and the conversation goes on with it.
func TestFailedLoadRestoresPrevious(t *testing.T) {
	good := synthPath(t, "llama")
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	part := filepath.Join(t.TempDir(), "part.gguf")
	if err := os.WriteFile(part, data[:len(data)/2], 0o600); err != nil {
		t.Fatal(err)
	}
	checkModel = func(string) error { return nil }
	t.Cleanup(func() { checkModel = engine.Check })

	f := newFixture(t, Options{})
	f.load(good)
	conv := f.conv(greedy(4))
	f.send(conv, "hi")
	if err := f.m.LoadModel(part); err != nil {
		t.Fatal(err)
	}
	var loadErr error
	evs := f.ev.until(t, func(ev api.Event) bool {
		switch e := ev.(type) {
		case api.Error:
			loadErr = e.Err
		case api.ModelLoaded:
			return true
		}
		return false
	})
	if !errors.Is(loadErr, gguf.ErrTruncated) {
		t.Fatalf("the failed load's error: %v (events %s)", loadErr, describe(evs))
	}
	if got := evs[len(evs)-1].(api.ModelLoaded).Info.Path; got != good {
		t.Fatalf("loaded %s after the failure; want the previous %s", got, good)
	}
	if tr := f.send(conv, "and then?"); tr.done.Reason == "" {
		t.Fatal("the restored model did not answer")
	}
}

// TestSendStories is the main path: load with progress, send, tokens
// stream, Done with stats, and everything is stored; a follow-up reuses
// the KV cache and still answers exactly as the engine does from scratch.
func TestSendStories(t *testing.T) {
	path := testdata.Stories260K(t)
	f := newFixture(t, Options{InMemory: true})
	if err := f.m.LoadModel(path); err != nil {
		t.Fatal(err)
	}
	evs := f.ev.until(t, func(ev api.Event) bool { _, ok := ev.(api.ModelLoaded); return ok })
	last := -1.0
	for _, ev := range evs {
		if p, ok := ev.(api.ModelLoading); ok {
			if p.Path != path || p.Progress < last || p.Progress > 1 {
				t.Fatalf("progress %+v after %v", p, last)
			}
			last = p.Progress
		}
	}
	if last != 1 {
		t.Fatalf("progress ended at %v: %s", last, describe(evs))
	}
	info := evs[len(evs)-1].(api.ModelLoaded).Info
	if info.Architecture != "llama" || info.Path != path {
		t.Fatalf("loaded %+v", info)
	}
	if st, _ := f.m.Status(); st.Model == nil || st.Model.Path != path {
		t.Fatalf("status %+v", st)
	}

	set := greedy(24)
	set.SystemPrompt = "You tell stories."
	conv := f.conv(set)
	user, err := f.m.Send(conv, "Once upon a time")
	if err != nil {
		t.Fatal(err)
	}
	if user.Role != store.RoleUser || user.Content != "Once upon a time" || user.ConversationID != conv {
		t.Fatalf("stored %+v", user)
	}
	tr := f.wait(conv)
	want := reference(t, path, set, "Once upon a time")
	if tr.text != want {
		t.Fatalf("streamed %q, the engine alone says %q", tr.text, want)
	}
	if tr.done.Reason != api.ReasonLength || tr.done.Msg != tr.msg || tr.stats.Msg != tr.msg {
		t.Fatalf("done %+v stats %+v", tr.done, tr.stats)
	}
	s := tr.stats
	if s.GenTokens != 24 || s.TTFT <= 0 || s.GenTPS <= 0 || s.PromptTPS <= 0 || s.Reused != 0 || s.Processed != s.PromptTokens || s.Seed != 1 {
		t.Fatalf("stats %+v", s)
	}
	if len(tr.added) != 2 || tr.added[0].ID != user.ID || tr.added[1].Role != store.RoleAssistant || tr.added[1].ID != tr.msg {
		t.Fatalf("assistant MessageAdded: %+v", tr.added)
	}
	msgs := f.messages(conv)
	if len(msgs) != 2 {
		t.Fatalf("%d messages stored", len(msgs))
	}
	a := msgs[1]
	if a.ID != tr.msg || a.Content != want || a.FinishReason != "length" || a.GenTokens != 24 || a.PromptTokens != s.PromptTokens ||
		a.Model != "stories260K.gguf" || a.Quant != "F32" || a.TTFT != s.TTFT.Truncate(time.Microsecond) && a.TTFT <= 0 {
		t.Fatalf("stored answer %+v", a)
	}
	var used api.Settings
	if err := json.Unmarshal([]byte(a.Sampler), &used); err != nil || used.Seed != 1 || used.MaxTokens != 24 {
		t.Fatalf("stored settings %s: %v", a.Sampler, err)
	}
	c, _ := f.m.Conversation(conv)
	if c.Title != "Once upon a time" || c.ModelPath != path {
		t.Fatalf("conversation %+v", c)
	}

	// A follow-up feeds only what the cache lacks.
	tr2 := f.send(conv, "Tell me more")
	if tr2.stats.Reused == 0 || tr2.stats.Processed >= tr2.stats.PromptTokens || tr2.stats.Reused+tr2.stats.Processed != tr2.stats.PromptTokens {
		t.Fatalf("follow-up did not reuse the cache: %+v", tr2.stats)
	}
	want2 := reference(t, path, set, "Once upon a time", want, "Tell me more")
	if tr2.text != want2 {
		t.Fatalf("follow-up %q, the engine alone says %q", tr2.text, want2)
	}
}

func TestStopWithinOneToken(t *testing.T) {
	const stopAt = 3
	var f *fixture
	var conv int64
	stopped := make(chan error, 1)
	var once sync.Once
	f = newFixture(t, Options{tokenHook: func(c int64, n int) {
		if c == conv && n == stopAt {
			// From the generating goroutine: no token can slip by.
			once.Do(func() { stopped <- f.m.Stop(c) })
		}
	}})
	f.load(testdata.Stories260K(t))
	set := greedy(200)
	conv = f.conv(set)
	tr := f.send(conv, "Once upon a time")
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
	if tr.done.Reason != api.ReasonCancelled || tr.done.Err != nil {
		t.Fatalf("done %+v", tr.done)
	}
	if tr.stats.GenTokens < stopAt || tr.stats.GenTokens > stopAt+1 {
		t.Fatalf("%d tokens generated after a stop at token %d", tr.stats.GenTokens, stopAt)
	}
	msgs := f.messages(conv)
	if a := msgs[len(msgs)-1]; a.FinishReason != "cancelled" || a.Content != tr.text || a.GenTokens != tr.stats.GenTokens {
		t.Fatalf("stored %+v, streamed %q", a, tr.text)
	}
	// The conversation is free again.
	if tr := f.send(conv, "again"); tr.done.Reason != api.ReasonLength {
		t.Fatalf("after a stop: %+v", tr.done)
	}
}

// TestStopFromEvents stops the way the UI does: on seeing a token.
func TestStopFromEvents(t *testing.T) {
	f, _ := storiesFixture(t)
	set := uncapped() // no cap: stories260K runs until the context fills
	conv := f.conv(set)
	if _, err := f.m.Send(conv, "Once upon a time"); err != nil {
		t.Fatal(err)
	}
	f.ev.until(t, func(ev api.Event) bool { _, ok := ev.(api.Token); return ok })
	start := time.Now()
	if err := f.m.Stop(conv); err != nil {
		t.Fatal(err)
	}
	tr := f.wait(conv)
	t.Logf("stopped after %d tokens, %v after Stop", tr.stats.GenTokens, time.Since(start))
	if tr.done.Reason != api.ReasonCancelled || tr.stats.GenTokens >= set.Context-tr.stats.PromptTokens {
		t.Fatalf("done %+v after %d tokens", tr.done, tr.stats.GenTokens)
	}
	if err := f.m.Stop(conv); err != nil {
		t.Fatalf("stopping an idle conversation: %v", err)
	}
}

func TestRegenerateAndEdit(t *testing.T) {
	f, path := storiesFixture(t)
	set := greedy(16)
	conv := f.conv(set)
	first := f.send(conv, "Lily and Ben")
	second := f.send(conv, "The little dog")
	msgs := f.messages(conv)
	if len(msgs) != 4 {
		t.Fatalf("%d messages", len(msgs))
	}

	// Regenerate the first answer: it and everything after it go; greedy
	// decoding gives the same answer again, from a truncated cache.
	if err := f.m.Regenerate(conv, msgs[1].ID); err != nil {
		t.Fatal(err)
	}
	if _, err := f.m.Send(conv, "busy?"); !errors.Is(err, api.ErrBusy) {
		t.Fatalf("Send while regenerating: %v", err)
	}
	evs := withoutCacheStates(f.ev.until(t, isDone(conv)))
	if _, ok := evs[0].(api.MessagesChanged); !ok {
		t.Fatalf("regenerate began with %s", describe(evs))
	}
	re := collect(t, evs, conv)
	if re.text != first.text || re.done.Reason != api.ReasonLength {
		t.Fatalf("regenerated %q (%s), first answer %q", re.text, re.done.Reason, first.text)
	}
	if re.stats.Reused == 0 {
		t.Fatalf("regenerate did not reuse the cached prompt: %+v", re.stats)
	}
	now := f.messages(conv)
	if len(now) != 2 || now[0].ID != msgs[0].ID || now[1].ID == msgs[1].ID || now[1].Content != first.text {
		t.Fatalf("after regenerate: %+v", now)
	}
	if now[1].Version != 2 || now[1].Versions != 2 {
		t.Fatalf("the regenerated answer is version %d of %d, want 2 of 2", now[1].Version, now[1].Versions)
	}
	_ = second

	// Regenerating from the person's message works the same way.
	if err := f.m.Regenerate(conv, now[0].ID); err != nil {
		t.Fatal(err)
	}
	if re := f.wait(conv); re.text != first.text {
		t.Fatalf("regenerate from the question: %q", re.text)
	}

	// Edit the question: the answer is the engine's answer to the new one.
	now = f.messages(conv)
	if err := f.m.Edit(conv, now[1].ID, "x"); !errors.Is(err, api.ErrNotUserMessage) {
		t.Fatalf("editing an answer: %v", err)
	}
	if err := f.m.Edit(conv, now[0].ID, "  "); !errors.Is(err, api.ErrEmptyMessage) {
		t.Fatalf("empty edit: %v", err)
	}
	other := f.conv(set)
	if err := f.m.Edit(other, now[0].ID, "x"); !errors.Is(err, api.ErrWrongConversation) {
		t.Fatalf("edit in the wrong conversation: %v", err)
	}
	if err := f.m.Edit(conv, now[0].ID, "The little dog"); err != nil {
		t.Fatal(err)
	}
	ed := f.wait(conv)
	if want := reference(t, path, set, "The little dog"); ed.text != want {
		t.Fatalf("after edit %q, want %q", ed.text, want)
	}
	final := f.messages(conv)
	if len(final) != 2 || final[0].ID == now[0].ID || final[0].Content != "The little dog" || final[1].Content != ed.text {
		t.Fatalf("after edit: %+v", final)
	}
	// The edit is a new version: the question as first asked stays.
	if final[0].Version != 2 || final[0].Versions != 2 {
		t.Fatalf("the edited question is version %d of %d", final[0].Version, final[0].Versions)
	}
}

// TestTwoConversations runs two conversations at once: they answer
// together, in one batch, the UI stays responsive meanwhile, and neither
// answer is disturbed by the other (each conversation has its own KV
// cache): each is what the engine alone gives.
func TestTwoConversations(t *testing.T) {
	path := testdata.Stories260K(t)
	// A is held after its first token until the checks below are done:
	// stories260K answers 48 tokens in milliseconds, faster than the
	// test's next commands on a loaded machine (A was once done before
	// the busy check). Sends only queue work, so they do not wait on the
	// held batch.
	// A is released once B has joined the batch, so B's answer starts
	// while A's has most of its tokens to go, however slowly B's goroutine
	// got there (on a loaded machine A once finished before B joined).
	var a, b int64
	held, release, joinedB := make(chan struct{}), make(chan struct{}), make(chan struct{})
	var once, onceB sync.Once
	var together atomic.Int32 // batch steps that ran both answers
	f := newFixture(t, Options{tokenHook: func(c int64, n int) {
		if c == a && n == 1 {
			once.Do(func() { close(held); <-release })
		}
	}, joinHook: func(c int64) {
		if c == b {
			onceB.Do(func() { close(joinedB) })
		}
	}, OnStep: func(si StepInfo) {
		if si.Decoding+si.Prefills >= 2 {
			together.Add(1)
		}
	}})
	f.load(path)
	setA, setB := greedy(48), greedy(12)
	a = f.conv(setA)
	b = f.conv(setB)
	let := f.sendBehindHeld(a, b, held, release)
	if _, err := f.m.Send(a, "again"); !errors.Is(err, api.ErrBusy) {
		t.Fatalf("second Send on a busy conversation: %v", err)
	}
	// Commands and queries answer while A generates.
	start := time.Now()
	c, err := f.m.NewConversation("typing meanwhile")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.m.Messages(b); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("commands took %v while generating", d)
	}
	if st, _ := f.m.Status(); len(st.Answering) == 0 || st.MaxAnswers < 2 {
		t.Fatalf("status %+v", st)
	}
	select {
	case <-joinedB:
	case <-time.After(waitLimit):
		t.Fatal("B never joined the batch while A was held")
	}
	let()
	evs := f.waitAll(a, b)
	ta, tb := collect(t, evs, a), collect(t, evs, b)
	if together.Load() == 0 {
		t.Fatal("no batch step ran both answers")
	}
	if len(tb.queue) != 0 {
		t.Fatalf("B waited although the cap leaves room: %+v", tb.queue)
	}
	// B's answer starts before A's Done: they run together.
	doneA, startB := -1, -1
	for i, ev := range evs {
		switch e := ev.(type) {
		case api.Done:
			if e.Conv == a {
				doneA = i
			}
		case api.MessageAdded:
			if e.Message.ConversationID == b && e.Message.Role == store.RoleAssistant {
				startB = i
			}
		}
	}
	if doneA < 0 || startB < 0 || startB > doneA {
		t.Fatalf("answers did not overlap: A done at %d, B started at %d", doneA, startB)
	}
	if want := reference(t, path, setA, "Once upon a time"); ta.text != want {
		t.Fatalf("A: %q, want %q", ta.text, want)
	}
	if want := reference(t, path, setB, "The little dog"); tb.text != want {
		t.Fatalf("B: %q, want %q", tb.text, want)
	}
	// Interleave follow-ups: each reuses its own cache.
	if _, err := f.m.Send(b, "More"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.m.Send(a, "More"); err != nil {
		t.Fatal(err)
	}
	evs = f.waitAll(a, b)
	ta2, tb2 := collect(t, evs, a), collect(t, evs, b)
	if tb2.stats.Reused == 0 || ta2.stats.Reused == 0 {
		t.Fatalf("follow-ups did not reuse their caches: A %+v B %+v", ta2.stats, tb2.stats)
	}
	if want := reference(t, path, setA, "Once upon a time", ta.text, "More"); ta2.text != want {
		t.Fatalf("A follow-up %q, want %q", ta2.text, want)
	}
	if want := reference(t, path, setB, "The little dog", tb.text, "More"); tb2.text != want {
		t.Fatalf("B follow-up %q, want %q", tb2.text, want)
	}
	if msgs := f.messages(c.ID); len(msgs) != 0 {
		t.Fatalf("the idle conversation has messages: %+v", msgs)
	}
}

// TestStopQueued: beyond the cap an answer waits; stopped meanwhile, it
// ends at once and stores nothing.
func TestStopQueued(t *testing.T) {
	// A is held at its first token until B has been queued and stopped:
	// stories260K answers 64 tokens faster than a loaded machine runs the
	// test's next lines, and B would start (and answer) before its Stop.
	var a int64
	held, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	f := newFixture(t, Options{MaxAnswers: 1, tokenHook: func(c int64, n int) {
		if c == a && n == 1 {
			once.Do(func() { close(held); <-release })
		}
	}})
	f.load(testdata.Stories260K(t))
	a = f.conv(greedy(64))
	b := f.conv(greedy(8))
	let := f.sendBehindHeld(a, b, held, release)
	if err := f.m.Stop(b); err != nil {
		t.Fatal(err)
	}
	let()
	evs := f.ev.until(t, isDone(a))
	tb := collect(t, evs, b)
	if tb.done.Reason != api.ReasonCancelled || tb.done.Msg != 0 || tb.text != "" {
		t.Fatalf("queued answer after Stop: %+v text %q", tb.done, tb.text)
	}
	if msgs := f.messages(b); len(msgs) != 1 || msgs[0].Role != store.RoleUser {
		t.Fatalf("B after stopping its queued answer: %+v", msgs)
	}
	// B can ask again.
	if tr := f.send(b, "The little dog"); tr.done.Reason != api.ReasonLength {
		t.Fatalf("B again: %+v", tr.done)
	}
}

func TestUnloadWhileIdle(t *testing.T) {
	f := newFixture(t, Options{})
	path := testdata.Stories260K(t)
	f.load(path)
	conv := f.conv(greedy(4))
	f.send(conv, "Hi")
	if err := f.m.UnloadModel(); err != nil {
		t.Fatal(err)
	}
	evs := f.ev.until(t, func(ev api.Event) bool { _, ok := ev.(api.ModelUnloaded); return ok })
	if u := evs[len(evs)-1].(api.ModelUnloaded); u.Path != path {
		t.Fatalf("unloaded %+v", u)
	}
	if st, _ := f.m.Status(); st.Model != nil {
		t.Fatalf("status after unload %+v", st)
	}
	if _, err := f.m.Send(conv, "still there?"); !errors.Is(err, api.ErrNoModel) {
		t.Fatalf("Send after unload: %v", err)
	}
	// Loading again works, and the old conversation continues.
	f.load(path)
	if tr := f.send(conv, "Hello again"); tr.done.Reason != api.ReasonLength || tr.stats.Reused != 0 {
		t.Fatalf("after reload: %+v %+v", tr.done, tr.stats)
	}
}

// TestLoadWhileGenerating switches models mid-answer: the answer is
// cancelled and saved, the new model loads.
func TestLoadWhileGenerating(t *testing.T) {
	f, conv, first := streaming(t)
	other := synthPath(t, "qwen2")
	if err := f.m.LoadModel(other); err != nil {
		t.Fatal(err)
	}
	evs := f.ev.until(t, func(ev api.Event) bool { _, ok := ev.(api.ModelLoaded); return ok })
	tr := collect(t, evs, conv)
	if tr.done.Reason != api.ReasonCancelled {
		t.Fatalf("answer during a model change: %+v (%s)", tr.done, describe(evs))
	}
	if info := evs[len(evs)-1].(api.ModelLoaded).Info; info.Path != other {
		t.Fatalf("loaded %+v", info)
	}
	msgs := f.messages(conv)
	streamed := first.Text + tr.text
	if tr.msg != 0 && tr.start != len(first.Text) {
		t.Fatalf("tokens resumed at byte %d after %q", tr.start, first.Text)
	}
	if a := msgs[len(msgs)-1]; a.FinishReason != "cancelled" || a.Content != streamed {
		t.Fatalf("stored %+v, streamed %q", a, streamed)
	}
}

// TestSynthModels answers with generated models of other architectures
// (ChatML templates, byte-level vocabularies).
func TestSynthModels(t *testing.T) {
	for _, arch := range []string{"qwen2", "qwen3"} {
		t.Run(arch, func(t *testing.T) {
			path := synthPath(t, arch)
			f := newFixture(t, Options{})
			info := f.load(path)
			if info.Architecture != arch || !info.HasTemplate {
				t.Fatalf("info %+v", info)
			}
			set := greedy(10)
			set.Context = 256
			conv := f.conv(set)
			tr := f.send(conv, "안녕하세요, 김치찌개!")
			if tr.stats.GenTokens == 0 || (tr.done.Reason != api.ReasonLength && tr.done.Reason != api.ReasonEOS) {
				t.Fatalf("answer %+v %+v", tr.done, tr.stats)
			}
			if want := reference(t, path, set, "안녕하세요, 김치찌개!"); tr.text != want {
				t.Fatalf("answer %q, want %q", tr.text, want)
			}
			hits, err := f.m.Search("김치", 0)
			if err != nil || len(hits) != 1 {
				t.Fatalf("search: %+v %v", hits, err)
			}
		})
	}
}

func TestTooLong(t *testing.T) {
	f := newFixture(t, Options{})
	f.load(synthPath(t, "qwen2"))
	set := greedy(4)
	set.Context = 64
	conv := f.conv(set)
	if _, err := f.m.Send(conv, strings.Repeat("a very long message ", 20)); err != nil {
		t.Fatal(err)
	}
	tr := collect(t, f.ev.until(t, isDone(conv)), conv)
	if tr.done.Reason != api.ReasonError || !errors.Is(tr.done.Err, api.ErrTooLong) {
		t.Fatalf("done %+v", tr.done)
	}
	msgs := f.messages(conv)
	if a := msgs[len(msgs)-1]; a.Role != store.RoleAssistant || a.FinishReason != "error" {
		t.Fatalf("stored %+v", a)
	}
}

// TestStreamingCommits checks that an answer is saved while it streams,
// and that Messages shows the live text ahead of the saved one.
func TestStreamingCommits(t *testing.T) {
	var f *fixture
	var conv int64
	type seen struct{ live, saved string }
	got := make(chan seen, 2)
	f = newFixture(t, Options{CommitEvery: 20 * time.Millisecond, tokenHook: func(c int64, n int) {
		if c != conv || (n != 2 && n != 30) {
			return
		}
		if n == 30 {
			time.Sleep(100 * time.Millisecond) // several commit periods
		}
		live, err := f.m.Messages(c)
		if err != nil {
			t.Error(err)
		}
		saved, err := f.st.Messages(context.Background(), c)
		if err != nil {
			t.Error(err)
		}
		got <- seen{live[len(live)-1].Content, saved[len(saved)-1].Content}
	}})
	f.load(testdata.Stories260K(t))
	conv = f.conv(greedy(40))
	tr := f.send(conv, "Once upon a time")
	early, late := <-got, <-got
	if early.live == "" || !strings.HasPrefix(tr.text, early.live) {
		t.Fatalf("live text at token 2: %q (answer %q)", early.live, tr.text)
	}
	if late.saved == "" || late.saved != late.live || !strings.HasPrefix(tr.text, late.saved) {
		t.Fatalf("at token 30, after a pause: saved %q, live %q", late.saved, late.live)
	}
}

func TestDeleteUndo(t *testing.T) {
	f, conv, _ := streaming(t)
	if err := f.m.Delete(conv); err != nil {
		t.Fatal(err)
	}
	evs := f.ev.until(t, isDone(conv))
	if tr := collect(t, evs, conv); tr.done.Reason != api.ReasonCancelled {
		t.Fatalf("deleting a generating conversation: %+v", tr.done)
	}
	list, _ := f.m.ListConversations()
	trash, _ := f.m.Trash()
	if len(list) != 0 || len(trash) != 1 || trash[0].ID != conv {
		t.Fatalf("list %+v trash %+v", list, trash)
	}
	if _, err := f.m.Send(conv, "hello?"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Send to a deleted conversation: %v", err)
	}
	if err := f.m.Undo(conv); err != nil {
		t.Fatal(err)
	}
	if list, _ := f.m.ListConversations(); len(list) != 1 {
		t.Fatalf("after undo: %+v", list)
	}
	if tr := f.send(conv, "Hello again"); tr.done.Err != nil || tr.stats.Reused != 0 {
		t.Fatalf("after undo: %+v %+v", tr.done, tr.stats)
	}
}

func TestCloseWhileGenerating(t *testing.T) {
	f, conv, _ := streaming(t)
	if err := f.m.Close(); err != nil {
		t.Fatal(err)
	}
	// Every event is delivered, then the channel closes.
	evs := f.ev.rest(t)
	tr := collect(t, evs, conv)
	if tr.done.Reason != api.ReasonCancelled {
		t.Fatalf("close while generating: %s", describe(evs))
	}
	if _, ok := evs[len(evs)-1].(api.ModelUnloaded); !ok {
		t.Fatalf("last event %T", evs[len(evs)-1])
	}
	msgs := f.messages(conv)
	if a := msgs[len(msgs)-1]; a.FinishReason != "cancelled" || a.Content == "" {
		t.Fatalf("stored %+v", a)
	}
	if _, err := f.m.Send(conv, "x"); !errors.Is(err, api.ErrClosed) {
		t.Fatalf("Send after Close: %v", err)
	}
	if err := f.m.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestConversationCommands(t *testing.T) {
	f := newFixture(t, Options{})
	c, err := f.m.NewConversation("")
	if err != nil {
		t.Fatal(err)
	}
	if err := f.m.Rename(c.ID, "김치 이야기"); err != nil {
		t.Fatal(err)
	}
	if err := f.m.SetPinned(c.ID, true); err != nil {
		t.Fatal(err)
	}
	got, _ := f.m.Conversation(c.ID)
	if got.Title != "김치 이야기" || !got.Pinned {
		t.Fatalf("conversation %+v", got)
	}
	set := DefaultSettings()
	set.SystemPrompt, set.Temperature, set.MaxTokens, set.Stop = "Be brief.", 0.3, 99, []string{"\n\n"}
	if err := f.m.SetSettings(c.ID, set); err != nil {
		t.Fatal(err)
	}
	back, err := f.m.Settings(c.ID)
	if err != nil || back.SystemPrompt != "Be brief." || back.Temperature != 0.3 || back.MaxTokens != 99 || len(back.Stop) != 1 {
		t.Fatalf("settings %+v %v", back, err)
	}
	bad := set
	bad.TopP = 0
	if err := f.m.SetSettings(c.ID, bad); err == nil {
		t.Fatal("invalid settings accepted")
	}
	if err := f.m.Rename(999, "x"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("rename missing: %v", err)
	}
	// Every command announced itself.
	n := 0
	for range 4 {
		if _, ok := f.ev.next(t).(api.ConversationChanged); ok {
			n++
		}
	}
	if n != 4 {
		t.Fatalf("%d ConversationChanged events, want 4", n)
	}
}

func TestDecodeSettings(t *testing.T) {
	def := DefaultSettings()
	s, err := decodeSettings("sys", `{"temperature":0.1}`, def) // an older, shorter record
	if err != nil {
		t.Fatal(err)
	}
	if s.Temperature != 0.1 || s.TopP != def.TopP || s.RepeatPenalty != def.RepeatPenalty || s.SystemPrompt != "sys" || s.Seed != -1 {
		t.Fatalf("decoded %+v", s)
	}
	if err := Validate(s); err != nil {
		t.Fatal(err)
	}
	if _, err := decodeSettings("", "{bad", def); err == nil {
		t.Fatal("bad JSON accepted")
	}
	if s, _ := decodeSettings("", "", def); s.TopK != def.TopK {
		t.Fatalf("empty record: %+v", s)
	}
}

func TestTitleFrom(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"  Hello   world \n second line", "Hello world"},
		{strings.Repeat("가", 60), strings.Repeat("가", 48) + "…"},
		{"short", "short"},
	} {
		if got := titleFrom(c.in); got != c.want {
			t.Errorf("titleFrom(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
