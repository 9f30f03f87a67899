package session

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	apicompare "github.com/churon/churon/app/api/compare"
	api "github.com/churon/churon/app/api/session"
	"github.com/churon/churon/app/export"
	"github.com/churon/churon/app/kvcache"
	"github.com/churon/churon/app/store"
	"github.com/churon/churon/engine"
	"github.com/churon/churon/internal/testdata"
)

// TestSettingsThroughTheManager: a setting is read back at once, said on
// Events, and kept in the database for the next run.
func TestSettingsThroughTheManager(t *testing.T) {
	db := filepath.Join(t.TempDir(), "churon.db")
	st, err := store.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	m := New(st, Options{})
	ev := record(m)
	if _, ok := m.Setting("ui.language"); ok {
		t.Fatal("a new library has no language setting")
	}
	if err := m.SetSetting("ui.language", "ko"); err != nil {
		t.Fatal(err)
	}
	if v, ok := m.Setting("ui.language"); !ok || v != "ko" {
		t.Fatalf("read back %q %v", v, ok)
	}
	evs := ev.until(t, func(e api.Event) bool { _, ok := e.(api.SettingChanged); return ok })
	if sc := evs[len(evs)-1].(api.SettingChanged); sc.Key != "ui.language" || sc.Value != "ko" {
		t.Fatalf("event %+v", sc)
	}
	m.Close()
	ev.rest(t)
	st.Close()

	st, err = store.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	m = New(st, Options{})
	defer m.Close()
	if v, ok := m.Setting("ui.language"); !ok || v != "ko" {
		t.Fatalf("after a restart: %q %v", v, ok)
	}
}

// TestImportAndComparisonsAreAnnounced: the writes the window makes
// besides conversations' own go through the manager, which says what
// changed.
func TestImportAndComparisonsAreAnnounced(t *testing.T) {
	f := newFixture(t, Options{})
	ctx := context.Background()
	c, err := f.m.NewConversation("Exported")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.st.AddMessage(ctx, store.Message{ConversationID: c.ID, Role: store.RoleUser, Content: "안녕하세요"}); err != nil {
		t.Fatal(err)
	}
	chats, err := f.m.Export(ctx, []int64{c.ID})
	if err != nil || len(chats) != 1 {
		t.Fatalf("export: %v %d", err, len(chats))
	}
	var doc bytes.Buffer
	if err := export.WriteJSON(&doc, chats, export.Options{}); err != nil {
		t.Fatal(err)
	}
	// Into a second library: the imported conversation is announced.
	g := newFixture(t, Options{})
	res, err := g.m.Import(ctx, &doc)
	if err != nil || len(res.Conversations) != 1 || res.Conversations[0].Outcome != store.Imported {
		t.Fatalf("import: %v %+v", err, res)
	}
	id := res.Conversations[0].ID
	g.ev.until(t, func(e api.Event) bool { cc, ok := e.(api.ConversationChanged); return ok && cc.Conv == id })
	if msgs, _ := g.m.Messages(id); len(msgs) != 1 || msgs[0].Content != "안녕하세요" {
		t.Fatalf("imported messages %+v", msgs)
	}

	r := &apicompare.Result{Format: apicompare.FormatVersion, Title: "q4 vs q8", Prompt: "hi", Models: make([]apicompare.ModelResult, 2)}
	if err := g.m.SaveComparison(ctx, r); err != nil || r.ID == 0 {
		t.Fatalf("save: %v id %d", err, r.ID)
	}
	g.ev.until(t, func(e api.Event) bool { cc, ok := e.(api.ComparisonsChanged); return ok && cc.ID == r.ID })
	list, err := g.m.Comparisons(ctx, 10)
	if err != nil || len(list) != 1 || list[0].Title != "q4 vs q8" {
		t.Fatalf("list: %v %+v", err, list)
	}
	back, err := g.m.Comparison(ctx, r.ID)
	if err != nil || back.Prompt != "hi" {
		t.Fatalf("reopen: %v %+v", err, back)
	}
	if err := g.m.DeleteComparison(ctx, r.ID); err != nil {
		t.Fatal(err)
	}
	g.ev.until(t, func(e api.Event) bool { cc, ok := e.(api.ComparisonsChanged); return ok && cc.ID == r.ID })
	if list, _ := g.m.Comparisons(ctx, 10); len(list) != 0 {
		t.Fatalf("deleted comparison still listed: %+v", list)
	}
}

// stuckDisk is a snapshot store whose writes hang until released: a
// disk that has stopped answering. With failFirst, the first write fails
// at once (a full disk) and the next one hangs.
type stuckDisk struct {
	*kvcache.Store
	failFirst bool
	calls     atomic.Int32
	once      sync.Once
	writing   chan struct{} // closed when the hanging write starts
	release   chan struct{}
}

func (d *stuckDisk) Save(key string, seq *engine.Sequence) (int64, error) {
	if d.calls.Add(1) == 1 && d.failFirst {
		return 0, errors.New("disk full")
	}
	d.once.Do(func() { close(d.writing) })
	<-d.release
	return d.Store.Save(key, seq)
}

// TestStuckDiskNeverHoldsTheScheduler: while a KV snapshot write hangs —
// the one after an answer, or the last try before a model change of a
// cache whose write failed — the manager still answers commands, and the
// model change waits for the write without holding anything else up.
func TestStuckDiskNeverHoldsTheScheduler(t *testing.T) {
	path := testdata.Stories260K(t)
	for _, failFirst := range []bool{false, true} {
		name := "after the answer"
		if failFirst {
			name = "before the unload"
		}
		t.Run(name, func(t *testing.T) {
			kv, err := kvcache.Open(t.TempDir(), 0)
			if err != nil {
				t.Fatal(err)
			}
			disk := &stuckDisk{Store: kv, failFirst: failFirst, writing: make(chan struct{}), release: make(chan struct{})}
			f := newFixture(t, Options{Disk: disk})
			f.load(path)
			conv := f.conv(greedy(8))
			f.send(conv, "Once upon a time")
			if err := f.m.UnloadModel(); err != nil {
				t.Fatal(err)
			}
			<-disk.writing

			// Commands go on while the write hangs.
			answered := make(chan error, 1)
			go func() {
				c, err := f.m.NewConversation("while the disk hangs")
				if err == nil {
					err = f.m.Rename(c.ID, "still answering")
				}
				answered <- err
			}()
			select {
			case err := <-answered:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("the manager stopped answering while a snapshot write hung")
			}
			if st, err := f.m.Status(); err != nil || st.Model == nil {
				t.Fatalf("the model was closed under a snapshot being written (%v)", err)
			}
			close(disk.release)
			f.ev.until(t, func(e api.Event) bool { _, ok := e.(api.ModelUnloaded); return ok })
		})
	}
}

// TestDiskBudgetDefaultIsTheStores: the front ends' figure for the
// default disk budget is the one the snapshot store applies.
func TestDiskBudgetDefaultIsTheStores(t *testing.T) {
	if api.DefaultKVDiskBudget != kvcache.DefaultBudget {
		t.Fatalf("api says %d, kvcache applies %d", api.DefaultKVDiskBudget, kvcache.DefaultBudget)
	}
}
