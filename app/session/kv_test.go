package session

import (
	"context"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	api "github.com/churon/churon/app/api/session"
	"github.com/churon/churon/app/kvcache"
	"github.com/churon/churon/app/store"
	"github.com/churon/churon/engine"
	"github.com/churon/churon/internal/testdata"
	"github.com/churon/churon/internal/testutil"
)

// TestWarmLogitsEqualCold: the logits after a warm feed (a cache built the
// way a conversation builds it — a prompt, then an answer decoded a token
// at a time — truncated to the common prefix, then fed the rest) are
// bit-identical to those of a cold prefill of the same tokens: on a
// follow-up, after a truncation (editing, regenerating) and with small
// batches, where the rows fall in chunks of other sizes and offsets. The
// CPU backend computes every row the same way whatever else is in its
// batch; the one exception there was (SwiGLU's tail, see
// engine/backend/cpu) made stories260K differ by up to 4e-6.
func TestWarmLogitsEqualCold(t *testing.T) {
	ctx := context.Background()
	text := "Once upon a time there was a little girl named Lily. She loved to play outside in the sunshine, and one day she found a big red ball in the park."
	cases := []struct {
		name, path    string
		batch, split  int // split: prompt tokens fed before the answer
		answer, trunc int // answer tokens decoded; tokens cut from the cache before the follow-up
	}{
		{"stories/default", testdata.Stories260K(t), 0, 20, 24, 0},
		{"stories/truncated", testdata.Stories260K(t), 0, 20, 24, 10},
		{"qwen2/truncated", synthPath(t, "qwen2"), 0, 30, 16, 6},
		{"stories/batch7", testdata.Stories260K(t), 7, 1, 12, 3},
		{"qwen2/default", synthPath(t, "qwen2"), 0, 30, 16, 0},
		{"llama/batch16", synthPath(t, "llama"), 16, 9, 16, 5},
	}
	models := map[string]*engine.Model{}
	defer func() {
		for _, m := range models {
			m.Close()
		}
	}()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			model := models[c.path]
			if model == nil {
				var err error
				if model, err = engine.Load(ctx, c.path, engine.LoadOptions{Threads: 2}); err != nil {
					t.Fatal(err)
				}
				models[c.path] = model
			}
			ids := model.TokenizePrompt(text, true, false)
			opt := engine.SequenceOptions{Context: 256, Batch: c.batch}
			warm, err := model.NewSequence(opt)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := warm.Generate(ctx, ids[:c.split], engine.GenerateOptions{MaxTokens: c.answer, Sampling: Params(greedy(0), 1), IgnoreEOS: true}, nil); err != nil {
				t.Fatal(err)
			}
			keep := warm.Len() - c.trunc
			follow := append(append([]int32(nil), warm.Tokens()[:keep]...), ids[c.split:]...)
			if err := warm.Truncate(keep); err != nil {
				t.Fatal(err)
			}
			if err := warm.Feed(ctx, follow[keep:]); err != nil {
				t.Fatal(err)
			}
			cold, err := model.NewSequence(opt)
			if err != nil {
				t.Fatal(err)
			}
			if err := cold.Feed(ctx, follow); err != nil {
				t.Fatal(err)
			}
			w, k := warm.Logits(), cold.Logits()
			differ, diff := 0, 0.0
			for i := range w {
				if w[i] != k[i] {
					differ++
					diff = max(diff, math.Abs(float64(w[i]-k[i])))
				}
			}
			if differ > 0 {
				t.Fatalf("%d of %d logits differ (max %g) after a warm feed of %d tokens on %d cached", differ, len(w), diff, len(follow)-keep, keep)
			}
		})
	}
}

// TestFollowUpReusesAnswer: after an answer the cache holds the prompt and
// the answer, and the next turn's prompt, rendered and tokenized afresh,
// matches all of it (a real model's answer tokenizes back to the tokens
// it was generated as); only the end-of-turn markup and the new message
// are processed. The reuse is also stored with the answer.
func TestFollowUpReusesAnswer(t *testing.T) {
	f, _ := storiesFixture(t)
	conv := f.conv(greedy(24))
	first := f.send(conv, "Once upon a time")
	second := f.send(conv, "Then what?")
	cached := held(first)
	if second.stats.Reused < cached || second.stats.From != api.CacheRAM {
		t.Fatalf("follow-up reused %d tokens from %s; the cache held %d (first %+v)", second.stats.Reused, second.stats.From, cached, first.stats)
	}
	msgs := f.messages(conv)
	if a := msgs[len(msgs)-1]; a.PromptReused != second.stats.Reused || a.PromptTokens != second.stats.PromptTokens {
		t.Fatalf("stored answer reuse %d of %d, stats %+v", a.PromptReused, a.PromptTokens, second.stats)
	}
}

// lifetime is one manager over a shared database and snapshot folder, as
// one run of the program.
type lifetime struct {
	*fixture
	disk *kvcache.Store
	log  *testutil.Buffer
}

func newLifetime(t *testing.T, db, kvDir string, opt Options) *lifetime {
	t.Helper()
	st, err := store.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	disk, err := kvcache.Open(kvDir, 0)
	if err != nil {
		t.Fatal(err)
	}
	lb := &testutil.Buffer{}
	opt.Disk = disk
	opt.Logger = slog.New(slog.NewTextHandler(lb, &slog.HandlerOptions{Level: slog.LevelDebug}))
	if opt.Threads == 0 {
		opt.Threads = 1
	}
	m := New(st, opt)
	l := &lifetime{fixture: &fixture{t: t, st: st, m: m, ev: record(m)}, disk: disk, log: lb}
	t.Cleanup(l.close)
	return l
}

func (l *lifetime) close() {
	l.m.Close()
	l.ev.rest(l.t)
	l.st.Close()
}

func (l *lifetime) cacheState(conv int64) api.CacheState {
	l.t.Helper()
	cs, err := l.m.CacheState(conv)
	if err != nil {
		l.t.Fatal(err)
	}
	return cs
}

// TestSnapshotAcrossRestarts: a conversation answered by one manager is
// continued by the next (a restart) from its snapshot on disk: the
// follow-up reuses the history and answers exactly as the engine does
// from scratch. A damaged, truncated or foreign snapshot is discarded
// (and logged), never trusted: the answer is still the cold one.
func TestSnapshotAcrossRestarts(t *testing.T) {
	path := testdata.Stories260K(t)
	set := greedy(16)
	first := "Once upon a time"
	cases := []struct {
		name   string
		kv     engine.KVType
		damage func(t *testing.T, file string)
		reused bool
	}{
		{"intact", engine.KVF16, nil, true},
		{"intact q8_0", engine.KVQ8_0, nil, true},
		{"truncated", engine.KVF16, func(t *testing.T, file string) {
			fi, err := os.Stat(file)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Truncate(file, fi.Size()/2); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"corrupt", engine.KVF16, func(t *testing.T, file string) {
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			for i := len(b) / 2; i < len(b)/2+64; i++ {
				b[i] ^= 0x5a
			}
			if err := os.WriteFile(file, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"another model's", engine.KVF16, func(t *testing.T, file string) {
			ctx := context.Background()
			other := openEngineModel(t, synthPath(t, "llama"))
			defer other.Close()
			seq, err := other.NewSequence(engine.SequenceOptions{Context: set.Context})
			if err != nil {
				t.Fatal(err)
			}
			if err := seq.Feed(ctx, []int32{1, 2, 3, 4, 5}); err != nil {
				t.Fatal(err)
			}
			d, err := kvcache.Open(filepath.Dir(file), 0)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := d.Save(strings.TrimSuffix(filepath.Base(file), filepath.Ext(file)), seq); err != nil {
				t.Fatal(err)
			}
		}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			db, kvDir := filepath.Join(dir, "churon.db"), filepath.Join(dir, "kv")
			a := newLifetime(t, db, kvDir, Options{KVType: c.kv})
			a.load(path)
			conv := a.conv(set)
			answer := a.send(conv, first)
			a.close()

			b := newLifetime(t, db, kvDir, Options{KVType: c.kv})
			if st := b.cacheState(conv); st.Where != api.CacheDisk || st.Tokens != held(answer) || st.Bytes <= 0 {
				t.Fatalf("after a restart the cache is %+v", st)
			}
			if c.damage != nil {
				e, ok := b.disk.Stat(diskKey(conv))
				if !ok {
					t.Fatal("no snapshot to damage")
				}
				c.damage(t, filepath.Join(kvDir, e.Key+".kv"))
			}
			b.load(path)
			// Another model's snapshot is not shown as this one's cache (a
			// damaged body is only found when it is read).
			if st := b.cacheState(conv); (st.Where == api.CacheDisk) != (c.reused || c.name != "another model's") {
				t.Fatalf("with the model loaded the cache is %+v", st)
			}
			follow := b.send(conv, "The little dog")
			want := referenceKV(t, path, set, c.kv, first, answer.text, "The little dog")
			if follow.text != want {
				t.Fatalf("after the restart: %q, from scratch: %q", follow.text, want)
			}
			if c.reused {
				if follow.stats.From != api.CacheDisk || follow.stats.Reused < answer.stats.PromptTokens || follow.stats.Restore <= 0 {
					t.Fatalf("the snapshot was not used: %+v", follow.stats)
				}
			} else {
				if follow.stats.From != api.CacheNone || follow.stats.Reused != 0 {
					t.Fatalf("a damaged snapshot was used: %+v", follow.stats)
				}
				if log := b.log.String(); !strings.Contains(log, "discarded") {
					t.Fatalf("the discarded snapshot was not logged:\n%s", log)
				}
			}
			if st := b.cacheState(conv); st.Where != api.CacheRAM || st.Tokens != held(follow) {
				t.Fatalf("after the follow-up the cache is %+v", st)
			}
		})
	}
}

// TestSnapshotAfterEachAnswer: the snapshot is written after every answer,
// without waiting for an eviction or for the manager to close, so a
// process killed later loses at most the cache of the answer it was
// writing.
func TestSnapshotAfterEachAnswer(t *testing.T) {
	dir := t.TempDir()
	l := newLifetime(t, filepath.Join(dir, "churon.db"), filepath.Join(dir, "kv"), Options{})
	l.load(testdata.Stories260K(t))
	conv := l.conv(greedy(8))
	for _, text := range []string{"Lily and Ben", "The little dog"} {
		tr := l.send(conv, text)
		cached := held(tr)
		for {
			if st, ok := l.ev.next(t).(api.CacheState); ok && st.Conv == conv && st.DiskTokens == cached {
				break
			}
		}
		if e, ok := l.disk.Stat(diskKey(conv)); !ok || e.Tokens != cached {
			t.Fatalf("after %q the snapshot is %+v (%v), the cache %d tokens", text, e, ok, cached)
		}
	}
}

// TestSpillOverBudget: with room for one idle cache, answering a second
// conversation spills the first to disk; its follow-up reads it back and
// answers as from scratch. Unloading the model leaves every cache on disk.
func TestSpillOverBudget(t *testing.T) {
	path := testdata.Stories260K(t)
	dir := t.TempDir()
	set := greedy(12)
	l := newLifetime(t, filepath.Join(dir, "churon.db"), filepath.Join(dir, "kv"), Options{KVBudget: 1})
	l.load(path)
	a, b := l.conv(set), l.conv(set)
	ta := l.send(a, "Lily and Ben")
	l.send(b, "The little dog")
	// The spill is written in the background: wait for A's state to say so.
	for {
		ev := l.ev.next(t)
		if st, ok := ev.(api.CacheState); ok && st.Conv == a && st.Where == api.CacheDisk {
			break
		}
	}
	if st := l.cacheState(a); st.Where != api.CacheDisk || st.Tokens != held(ta) {
		t.Fatalf("A after B's answer: %+v", st)
	}
	if st := l.cacheState(b); st.Where != api.CacheRAM {
		t.Fatalf("B just answered: %+v", st)
	}
	follow := l.send(a, "Then?")
	if follow.stats.From != api.CacheDisk || follow.stats.Reused == 0 {
		t.Fatalf("A's follow-up: %+v", follow.stats)
	}
	if want := reference(t, path, set, "Lily and Ben", ta.text, "Then?"); follow.text != want {
		t.Fatalf("A's follow-up %q, from scratch %q", follow.text, want)
	}
	if err := l.m.UnloadModel(); err != nil {
		t.Fatal(err)
	}
	l.ev.until(t, func(ev api.Event) bool { _, ok := ev.(api.ModelUnloaded); return ok })
	for _, c := range []int64{a, b} {
		if st := l.cacheState(c); st.Where != api.CacheDisk || st.DiskTokens == 0 {
			t.Fatalf("conversation %d after unloading: %+v", c, st)
		}
	}
	if files, bytes := l.m.KVDiskUsage(); files != 2 || bytes <= 0 {
		t.Fatalf("disk usage %d files, %d bytes", files, bytes)
	}
	if err := l.m.ClearKVDisk(); err != nil {
		t.Fatal(err)
	}
	if files, _ := l.m.KVDiskUsage(); files != 0 {
		t.Fatalf("%d files after Clear", files)
	}
	if st := l.cacheState(a); st.Where != api.CacheNone {
		t.Fatalf("A after Clear: %+v", st)
	}
}

func TestKVBudgetSetting(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "churon.db")
	l := newLifetime(t, db, filepath.Join(dir, "kv"), Options{})
	if b, set := l.m.KVBudget(); set || b < 256<<20 || b > 8<<30 { // DefaultKVBudget's bounds
		t.Fatalf("default budget %d (set %v)", b, set)
	}
	if err := l.m.SetKVBudget(-1); err == nil {
		t.Fatal("a negative budget was accepted")
	}
	if err := l.m.SetKVBudget(300 << 20); err != nil {
		t.Fatal(err)
	}
	l.close()
	l = newLifetime(t, db, filepath.Join(dir, "kv"), Options{})
	if b, set := l.m.KVBudget(); !set || b != 300<<20 {
		t.Fatalf("stored budget read back as %d (set %v)", b, set)
	}
	if err := l.m.SetKVBudget(0); err != nil {
		t.Fatal(err)
	}
	if _, set := l.m.KVBudget(); set {
		t.Fatal("budget 0 did not return to automatic")
	}
}

// TestTidy: a starting manager empties the trash of conversations deleted
// longer ago than TrashKeep and deletes the snapshots of conversations
// that no longer exist, keeping those of live and recently trashed ones.
func TestTidy(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db, kvDir := filepath.Join(dir, "churon.db"), filepath.Join(dir, "kv")
	st, err := store.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	var live, trashed int64
	for _, id := range []*int64{&live, &trashed} {
		c, err := st.CreateConversation(ctx, store.Conversation{Title: "t"})
		if err != nil {
			t.Fatal(err)
		}
		*id = c.ID
	}
	if err := st.DeleteConversation(ctx, trashed); err != nil {
		t.Fatal(err)
	}
	st.Close()

	model := openEngineModel(t, testdata.Stories260K(t))
	defer model.Close()
	seq, err := model.NewSequence(engine.SequenceOptions{Context: 64})
	if err != nil {
		t.Fatal(err)
	}
	if err := seq.Feed(ctx, []int32{1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	disk, err := kvcache.Open(kvDir, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []int64{live, trashed, 99} {
		if _, err := disk.Save(diskKey(id), seq); err != nil {
			t.Fatal(err)
		}
	}
	keys := func() []string {
		t.Helper()
		k, err := disk.Keys()
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(k)
		return k
	}

	// The trash is recent: only the snapshot of conversation 99, which
	// never existed here, goes.
	newLifetime(t, db, kvDir, Options{})
	if got, want := keys(), []string{diskKey(live), diskKey(trashed)}; !slices.Equal(got, want) {
		t.Fatalf("after the first start: snapshots %q, want %q", got, want)
	}

	// Kept for a nanosecond only: the trashed conversation is removed for
	// good, and its snapshot with it.
	time.Sleep(2 * time.Millisecond)
	l := newLifetime(t, db, kvDir, Options{TrashKeep: time.Nanosecond})
	if got, want := keys(), []string{diskKey(live)}; !slices.Equal(got, want) {
		t.Fatalf("after emptying the trash: snapshots %q, want %q", got, want)
	}
	if tr, err := l.m.Trash(); err != nil || len(tr) != 0 {
		t.Fatalf("trash after purge: %v, %v", tr, err)
	}
	if _, err := l.m.Conversation(live); err != nil {
		t.Fatalf("the live conversation: %v", err)
	}
}

// TestKVDiskBudgetSetting: the disk budget the person sets reaches the
// disk cache at once, evicting what no longer fits, and again at the
// next start; 0 goes back to the default.
func TestKVDiskBudgetSetting(t *testing.T) {
	dir := t.TempDir()
	db, kvDir := filepath.Join(dir, "churon.db"), filepath.Join(dir, "kv")
	l := newLifetime(t, db, kvDir, Options{})
	if b, set := l.m.KVDiskBudget(); set || b != kvcache.DefaultBudget {
		t.Fatalf("fresh: budget %d, set %v", b, set)
	}
	if err := l.m.SetKVDiskBudget(64 << 20); err != nil {
		t.Fatal(err)
	}
	if b, set := l.m.KVDiskBudget(); !set || b != 64<<20 || l.disk.Budget() != 64<<20 {
		t.Fatalf("after setting: budget %d (store %d), set %v", b, l.disk.Budget(), set)
	}
	if err := l.m.SetKVDiskBudget(-1); err == nil {
		t.Error("a negative budget was accepted")
	}

	next := newLifetime(t, db, kvDir, Options{})
	if b, set := next.m.KVDiskBudget(); !set || b != 64<<20 {
		t.Fatalf("after a restart: budget %d, set %v", b, set)
	}
	if err := next.m.SetKVDiskBudget(0); err != nil {
		t.Fatal(err)
	}
	if b, set := next.m.KVDiskBudget(); set || b != kvcache.DefaultBudget {
		t.Fatalf("back to the default: budget %d, set %v", b, set)
	}
}

// held is how many tokens an answer's turn leaves in the cache: the
// prompt and the answer, less a last token that was never fed — the end
// of generation, or a token sampled as the context filled. An answer cut
// at its cap has its last token fed, so that a follow-up reuses all of it.
func held(tr turn) int {
	n := tr.stats.PromptTokens + tr.stats.GenTokens
	if tr.done.Reason != api.ReasonLength {
		n--
	}
	return n
}
