package session

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	api "github.com/churon/churon/app/api/session"
	"github.com/churon/churon/app/store"
	"github.com/churon/churon/app/store/storetest"
	"github.com/churon/churon/engine"
	"github.com/churon/churon/engine/chat"
	"github.com/churon/churon/internal/testdata"
	"github.com/churon/churon/models/synth"
	"github.com/churon/churon/models/synth/synthtest"
)

// waitLimit bounds every wait: generous, because -race slows the engine
// down by an order of magnitude.
const waitLimit = 2 * time.Minute

// synthPath is a tiny random model with a ChatML template (written once
// per test binary).
func synthPath(t *testing.T, arch string) string {
	t.Helper()
	return synthtest.Path(t, arch, synth.Tiny(arch))
}

// openEngineModel loads the model at path with the engine alone, on one
// thread, for the checks against what the manager does; the caller closes
// it (so that a test that loads several in turn holds one at a time).
func openEngineModel(t *testing.T, path string) *engine.Model {
	t.Helper()
	m, err := engine.Load(context.Background(), path, engine.LoadOptions{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// loadEngineModel is openEngineModel, closed at the end of the test.
func loadEngineModel(t *testing.T, path string) *engine.Model {
	t.Helper()
	m := openEngineModel(t, path)
	t.Cleanup(func() { m.Close() })
	return m
}

// greedy settings with a short answer, so tests are quick and exact.
func greedy(maxTokens int) api.Settings {
	s := DefaultSettings()
	s.Temperature, s.TopK, s.TopP, s.MinP, s.RepeatPenalty = 0, 0, 1, 0, 1
	s.Seed, s.MaxTokens, s.Context = 1, maxTokens, 512
	return s
}

// uncapped is greedy with no token cap and stories260K's whole trained
// context, so an answer runs long enough (thousands of tokens) for a test
// to stop, delete, switch or close mid-answer even on a fast engine.
func uncapped() api.Settings {
	s := greedy(0)
	s.Context = 2048
	return s
}

// recorder drains a manager's events into a list the test reads in order.
type recorder struct {
	mu     sync.Mutex
	evs    []api.Event
	closed bool
	more   chan struct{}
	pos    int
}

func record(m *Manager) *recorder {
	r := &recorder{more: make(chan struct{}, 1)}
	go func() {
		for ev := range m.Events() {
			r.mu.Lock()
			r.evs = append(r.evs, ev)
			r.mu.Unlock()
			select { // a wake-up, not an event: one pending is enough
			case r.more <- struct{}{}:
			default:
			}
		}
		r.mu.Lock()
		r.closed = true
		r.mu.Unlock()
		select {
		case r.more <- struct{}{}:
		default:
		}
	}()
	return r
}

// next returns the next event, failing the test after waitLimit.
func (r *recorder) next(t *testing.T) api.Event {
	t.Helper()
	deadline := time.After(waitLimit)
	for {
		r.mu.Lock()
		if r.pos < len(r.evs) {
			ev := r.evs[r.pos]
			r.pos++
			r.mu.Unlock()
			return ev
		}
		closed := r.closed
		r.mu.Unlock()
		if closed {
			t.Fatalf("events closed while waiting")
		}
		select {
		case <-r.more:
		case <-deadline:
			t.Fatalf("no event within %v", waitLimit)
		}
	}
}

// rest waits for the channel to close and returns the events not read
// yet.
func (r *recorder) rest(t *testing.T) []api.Event {
	t.Helper()
	deadline := time.After(waitLimit)
	for {
		r.mu.Lock()
		if r.closed {
			evs := r.evs[r.pos:]
			r.pos = len(r.evs)
			r.mu.Unlock()
			return evs
		}
		r.mu.Unlock()
		select {
		case <-r.more:
		case <-deadline:
			t.Fatalf("events not closed within %v", waitLimit)
		}
	}
}

// until reads events up to and including the first that f accepts, and
// returns them all.
func (r *recorder) until(t *testing.T, f func(api.Event) bool) []api.Event {
	t.Helper()
	var out []api.Event
	for {
		ev := r.next(t)
		out = append(out, ev)
		if f(ev) {
			return out
		}
	}
}

func isDone(conv int64) func(api.Event) bool {
	return func(ev api.Event) bool {
		d, ok := ev.(api.Done)
		return ok && d.Conv == conv
	}
}

// turn is what the events of one answer add up to.
type turn struct {
	msg       int64
	start     int // offset of the first token seen
	text      string
	reasoning string // Token events marked Reasoning, from offset 0
	stats     api.Stats
	done      api.Done
	queue     []api.Queued
	added     []api.Message
}

func collect(t *testing.T, evs []api.Event, conv int64) turn {
	t.Helper()
	var tr turn
	for _, ev := range evs {
		switch e := ev.(type) {
		case api.Token:
			if e.Conv != conv {
				continue
			}
			if e.Reasoning {
				if e.Offset != len(tr.reasoning) {
					t.Fatalf("reasoning token at offset %d after %d bytes", e.Offset, len(tr.reasoning))
				}
				tr.reasoning += e.Text
				tr.msg = e.Msg
				continue
			}
			if tr.msg == 0 || tr.text == "" && tr.start == 0 {
				tr.start = e.Offset // the caller may have read earlier tokens itself
			}
			if e.Offset != tr.start+len(tr.text) {
				t.Fatalf("token at offset %d after %d bytes", e.Offset, tr.start+len(tr.text))
			}
			tr.text += e.Text
			tr.msg = e.Msg
		case api.Stats:
			if e.Conv == conv {
				tr.stats = e
			}
		case api.Done:
			if e.Conv == conv {
				tr.done = e
			}
		case api.Queued:
			if e.Conv == conv {
				tr.queue = append(tr.queue, e)
			}
		case api.MessageAdded:
			if e.Message.ConversationID == conv {
				tr.added = append(tr.added, e.Message)
			}
		}
	}
	return tr
}

type fixture struct {
	t  *testing.T
	st *store.Store
	m  *Manager
	ev *recorder
}

func newFixture(t *testing.T, opt Options) *fixture {
	t.Helper()
	st := storetest.Temp(t)
	if opt.Threads == 0 {
		opt.Threads = 1
	}
	m := New(st, opt)
	f := &fixture{t: t, st: st, m: m, ev: record(m)}
	t.Cleanup(func() { m.Close() }) // before the store's own cleanup
	return f
}

// storiesFixture is a fixture with default options and stories260K
// loaded, and that model's path (for reference answers).
func storiesFixture(t *testing.T) (*fixture, string) {
	t.Helper()
	path := testdata.Stories260K(t)
	f := newFixture(t, Options{})
	f.load(path)
	return f, path
}

// sendBehindHeld sends "Once upon a time" to a, waits until a's token
// hook holds it (closing held), then sends "The little dog" to b, which
// finds a still answering. The returned func lets a go on; it also runs
// when the test ends, so a failing test does not leave a held forever.
func (f *fixture) sendBehindHeld(a, b int64, held <-chan struct{}, release chan struct{}) (let func()) {
	f.t.Helper()
	if _, err := f.m.Send(a, "Once upon a time"); err != nil {
		f.t.Fatal(err)
	}
	<-held
	var once sync.Once
	let = func() { once.Do(func() { close(release) }) }
	f.t.Cleanup(let)
	if _, err := f.m.Send(b, "The little dog"); err != nil {
		f.t.Fatal(err)
	}
	return let
}

// load loads a model and waits for it.
func (f *fixture) load(path string) api.ModelInfo {
	f.t.Helper()
	if err := f.m.LoadModel(path); err != nil {
		f.t.Fatal(err)
	}
	evs := f.ev.until(f.t, func(ev api.Event) bool {
		switch e := ev.(type) {
		case api.ModelLoaded:
			return true
		case api.Error:
			f.t.Fatalf("load %s: %v", path, e.Err)
		}
		return false
	})
	return evs[len(evs)-1].(api.ModelLoaded).Info
}

// conv makes a conversation with the given settings.
func (f *fixture) conv(set api.Settings) int64 {
	f.t.Helper()
	c, err := f.m.NewConversation("")
	if err != nil {
		f.t.Fatal(err)
	}
	if err := f.m.SetSettings(c.ID, set); err != nil {
		f.t.Fatal(err)
	}
	return c.ID
}

// send sends and waits for the answer.
func (f *fixture) send(conv int64, text string) turn {
	f.t.Helper()
	if _, err := f.m.Send(conv, text); err != nil {
		f.t.Fatal(err)
	}
	return f.wait(conv)
}

func (f *fixture) wait(conv int64) turn {
	f.t.Helper()
	tr := collect(f.t, f.ev.until(f.t, isDone(conv)), conv)
	if tr.done.Err != nil {
		f.t.Fatalf("answer failed: %v", tr.done.Err)
	}
	return tr
}

func (f *fixture) messages(conv int64) []api.Message {
	f.t.Helper()
	msgs, err := f.st.Messages(context.Background(), conv)
	if err != nil {
		f.t.Fatal(err)
	}
	return msgs
}

// reference generates the same answer with the engine alone, from
// scratch, for comparison.
func reference(t *testing.T, path string, set api.Settings, history ...string) string {
	t.Helper()
	return referenceKV(t, path, set, engine.KVF16, history...)
}

// referenceKV is reference with a KV cache type.
func referenceKV(t *testing.T, path string, set api.Settings, kv engine.KVType, history ...string) string {
	t.Helper()
	var msgs []chat.Message
	if set.SystemPrompt != "" {
		msgs = append(msgs, chat.Message{Role: "system", Content: set.SystemPrompt})
	}
	for i, h := range history {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		msgs = append(msgs, chat.Message{Role: role, Content: h})
	}
	_, text := engineAnswer(t, path, set, kv, msgs)
	return text
}

// engineAnswer generates from msgs with the engine alone, from scratch,
// with set's sampling, stop strings and template switches and a kv cache:
// the prompt and the text the model writes, markers included.
func engineAnswer(t *testing.T, path string, set api.Settings, kv engine.KVType, msgs []chat.Message) (prompt, text string) {
	t.Helper()
	ctx := context.Background()
	model := openEngineModel(t, path)
	defer model.Close()
	ids, prompt, err := model.ChatTokensWith(ctx, msgs, templateVars(set))
	if err != nil {
		t.Fatal(err)
	}
	seq, err := model.NewSequence(engine.SequenceOptions{Context: set.Context, KVType: kv})
	if err != nil {
		t.Fatal(err)
	}
	res, err := seq.Generate(ctx, ids, engine.GenerateOptions{MaxTokens: set.MaxTokens, Sampling: Params(set, uint64(set.Seed)), Stop: set.Stop}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return prompt, res.Text
}

// withoutCacheStates leaves out CacheState events, which a snapshot
// written in the background sends at any point.
func withoutCacheStates(evs []api.Event) []api.Event {
	var out []api.Event
	for _, ev := range evs {
		if _, ok := ev.(api.CacheState); !ok {
			out = append(out, ev)
		}
	}
	return out
}

func describe(evs []api.Event) string {
	s := ""
	for _, ev := range evs {
		s += fmt.Sprintf("%T ", ev)
	}
	return s
}

// streaming starts an uncapped answer to "Once upon a time" in a new
// conversation with stories260K and waits for its first token.
func streaming(t *testing.T) (f *fixture, conv int64, first api.Token) {
	t.Helper()
	f = newFixture(t, Options{})
	f.load(testdata.Stories260K(t))
	conv = f.conv(uncapped())
	if _, err := f.m.Send(conv, "Once upon a time"); err != nil {
		t.Fatal(err)
	}
	seen := f.ev.until(t, func(ev api.Event) bool { _, ok := ev.(api.Token); return ok })
	return f, conv, seen[len(seen)-1].(api.Token)
}
