package session

import (
	"testing"

	api "github.com/churon/churon/app/api/session"
	"github.com/churon/churon/app/store"
	"github.com/churon/churon/internal/testdata"
)

// TestStartDemo: the built-in demo loads from memory, its conversation
// opens with the demo notice, and it answers as the same model read from
// a file does; a second demo chat does not load it again.
func TestStartDemo(t *testing.T) {
	f := newFixture(t, Options{Defaults: ptr(greedy(24))})
	c, err := f.m.StartDemo()
	if err != nil {
		t.Fatal(err)
	}
	evs := f.ev.until(t, func(ev api.Event) bool {
		if e, ok := ev.(api.Error); ok {
			t.Fatalf("%s: %v", e.Op, e.Err)
		}
		_, ok := ev.(api.ModelLoaded)
		return ok
	})
	info := evs[len(evs)-1].(api.ModelLoaded).Info
	if info.Path != api.DemoPath || info.Architecture != "llama" || info.FileBytes != 1185376 {
		t.Fatalf("loaded %+v", info)
	}
	msgs := f.messages(c.ID)
	if len(msgs) != 1 || msgs[0].Role != store.RoleNotice {
		t.Fatalf("the demo chat opens with %+v", msgs)
	}
	if n, ok := api.ParseNotice(msgs[0]); !ok || n.Kind != api.NoticeDemo {
		t.Fatalf("notice %+v", msgs[0])
	}
	if set, err := f.m.Settings(c.ID); err != nil || set.MaxTokens != 24 {
		t.Fatalf("the demo chat's settings %+v (%v): a cap below the demo's stays", set, err)
	}
	tr := f.send(c.ID, "Once upon a time")
	if want := reference(t, testdata.Stories260K(t), greedy(24), "Once upon a time"); tr.text != want {
		t.Fatalf("the demo answers %q; stories260K from its file, %q", tr.text, want)
	}
	msgs = f.messages(c.ID)
	if len(msgs) != 3 || msgs[2].Content != tr.text || msgs[2].Model != "stories260K.gguf" {
		t.Fatalf("stored %+v", msgs)
	}
	// Another demo chat while the demo is loaded: no reload.
	c2, err := f.m.StartDemo()
	if err != nil || c2.ID == c.ID {
		t.Fatalf("second demo chat: %v", err)
	}
	tr2 := f.send(c2.ID, "Once upon a time")
	if tr2.text != tr.text {
		t.Fatalf("second demo chat answers %q", tr2.text)
	}
	// With uncapped defaults, a demo chat's answers are capped.
	f2 := newFixture(t, Options{Defaults: ptr(uncapped())})
	c3, err := f2.m.StartDemo()
	if err != nil {
		t.Fatal(err)
	}
	if set, err := f2.m.Settings(c3.ID); err != nil || set.MaxTokens != demoMaxTokens {
		t.Fatalf("an uncapped demo chat: %+v (%v)", set, err)
	}
	if err := f.m.LoadModel("churon:demo/nothing.gguf"); err == nil {
		t.Error("a path under the demo's scheme that is not the demo loaded")
	}
}

func ptr[T any](v T) *T { return &v }
