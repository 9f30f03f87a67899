package session

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	api "github.com/churon/churon/app/api/session"
	"github.com/churon/churon/app/store"
	"github.com/churon/churon/internal/testdata"
	"github.com/churon/churon/internal/testutil"
)

const crashChildEnv = "CHURON_SESSION_CRASH_CHILD"

// TestCrashMidAnswer kills, with SIGKILL, a process whose manager is
// streaming an answer from stories260K, after the parent has seen part of
// the answer saved. Reopened, the database holds the question intact and
// the answer up to at least what was seen saved, consistent with what was
// shown.
func TestCrashMidAnswer(t *testing.T) {
	if spec := os.Getenv(crashChildEnv); spec != "" {
		sessionCrashChild(spec)
		return
	}
	if testing.Short() {
		t.Skip("starts a child process")
	}
	model := testdata.Stories260K(t)
	db := filepath.Join(t.TempDir(), "churon.db")
	cmd, out := testutil.StartChild(t, waitLimit, "^TestCrashMidAnswer$", crashChildEnv+"="+db+"|"+model)

	// Read what the child "shows" (its Token events) on a goroutine.
	type shown struct {
		Conv, Msg int64
		Text      string
	}
	lines := make(chan shown, 1024)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var s shown
			if json.Unmarshal(sc.Bytes(), &s) == nil {
				lines <- s
			}
		}
	}()
	var (
		text      strings.Builder
		conv, msg int64
	)
	first, ok := <-lines
	if !ok {
		t.Fatal("the child showed nothing")
	}
	conv, msg = first.Conv, first.Msg
	text.WriteString(first.Text)

	// Watch the database the child writes until part of the answer is
	// saved, then let it stream a little more and kill it.
	st, err := store.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	var saved string
	for saved == "" {
		select {
		case s, ok := <-lines:
			if !ok {
				t.Fatal("the child stopped before saving anything")
			}
			if s.Msg == msg {
				text.WriteString(s.Text)
			}
		case <-time.After(10 * time.Millisecond):
		}
		m, err := st.Message(context.Background(), msg)
		if err != nil {
			t.Fatal(err)
		}
		saved = m.Content
	}
	st.Close()
	time.Sleep(30 * time.Millisecond)
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	for s := range lines {
		if s.Msg == msg {
			text.WriteString(s.Text)
		}
	}
	t.Logf("killed the child (%v) after %d bytes shown, %d seen saved", cmd.Wait(), text.Len(), len(saved))

	st, err = store.Open(context.Background(), db)
	if err != nil {
		t.Fatalf("the database does not open after the crash: %v", err)
	}
	defer st.Close()
	if err := st.Check(context.Background()); err != nil {
		t.Fatal(err)
	}
	msgs, err := st.Messages(context.Background(), conv)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 2 || msgs[0].Content != "Once upon a time" || msgs[1].ID != msg {
		t.Fatalf("messages after the crash: %+v", msgs)
	}
	a := msgs[1]
	if a.FinishReason != "" {
		t.Fatalf("the interrupted answer has finish reason %q", a.FinishReason)
	}
	if !strings.HasPrefix(a.Content, saved) {
		t.Fatalf("a commit was lost: the answer is %q, %q was saved before the kill", a.Content, saved)
	}
	all := text.String()
	if !strings.HasPrefix(all, a.Content) && !strings.HasPrefix(a.Content, all) {
		t.Fatalf("saved answer %q and shown answer %q disagree", a.Content, all)
	}
}

// sessionCrashChild streams answers until it is killed, printing each
// Token event as a JSON line.
func sessionCrashChild(spec string) {
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, "crash child:", err)
		os.Exit(3)
	}
	db, model, _ := strings.Cut(spec, "|")
	st, err := store.Open(context.Background(), db)
	if err != nil {
		fail(err)
	}
	m := New(st, Options{Threads: 1, CommitEvery: 50 * time.Millisecond})
	if err := m.LoadModel(model); err != nil {
		fail(err)
	}
	c, err := m.NewConversation("crash")
	if err != nil {
		fail(err)
	}
	set := uncapped()
	set.Context = 2048
	if err := m.SetSettings(c.ID, set); err != nil {
		fail(err)
	}
	if _, err := m.Send(c.ID, "Once upon a time"); err != nil {
		fail(err)
	}
	enc := json.NewEncoder(os.Stdout)
	for ev := range m.Events() {
		switch e := ev.(type) {
		case api.Token:
			if err := enc.Encode(struct {
				Conv, Msg int64
				Text      string
			}{e.Conv, e.Msg, e.Text}); err != nil {
				fail(err)
			}
		case api.Done:
			fail(fmt.Errorf("the answer ended (%s) before the kill", e.Reason))
		case api.Error:
			fail(e.Err)
		}
	}
}
