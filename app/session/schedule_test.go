package session

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	api "github.com/churon/churon/app/api/session"
	"github.com/churon/churon/internal/testdata"
)

// TestAnswersTogetherEqualAlone: four conversations asked at once answer
// in one batch — steps decode several of them — and each answer is
// exactly what the engine alone gives (greedy).
func TestAnswersTogetherEqualAlone(t *testing.T) {
	path := testdata.Stories260K(t)
	var widest atomic.Int32
	f := newFixture(t, Options{OnStep: func(si StepInfo) {
		if n := int32(si.Decoding); n > widest.Load() {
			widest.Store(n)
		}
	}})
	f.load(path)
	prompts := []string{"Once upon a time", "The little dog", "Lily and Ben went to the park", "Sam had a red ball"}
	convs := make([]int64, len(prompts))
	// Asked while the batch stands still, and let go once all four have
	// joined it, so that they run together (stories260K would finish one
	// before the next is prepared).
	var b *Batch
	f.m.call(func() error { b = f.m.s.batch; return nil })
	resume, err := b.Pause(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range prompts {
		convs[i] = f.conv(greedy(24 + 4*i))
		if _, err := f.m.Send(convs[i], p); err != nil {
			t.Fatal(err)
		}
	}
	for deadline := time.Now().Add(waitLimit); ; time.Sleep(time.Millisecond) {
		b.mu.Lock()
		joined := len(b.joining)
		b.mu.Unlock()
		if joined == len(prompts) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d answers joined the batch", joined, len(prompts))
		}
	}
	resume()
	evs := f.waitAll(convs...)
	for i, c := range convs {
		tr := collect(t, evs, c)
		if want := reference(t, path, greedy(24+4*i), prompts[i]); tr.text != want || tr.done.Reason != api.ReasonLength {
			t.Errorf("conversation %d: %q (%s), alone %q", i, tr.text, tr.done.Reason, want)
		}
	}
	if widest.Load() < 2 {
		t.Errorf("no step decoded more than %d answers: they did not run together", widest.Load())
	}
}

// TestQueueBeyondCap: with the cap at 2, a third answer waits (Queued,
// position 1), Status says who answers and who waits, and the third
// starts when one of the others ends; the person's setting moves the cap.
func TestQueueBeyondCap(t *testing.T) {
	f := newFixture(t, Options{})
	if err := f.m.SetSetting(SettingMaxAnswers, "2"); err != nil {
		t.Fatal(err)
	}
	f.load(testdata.Stories260K(t))
	a, b, c := f.conv(uncapped()), f.conv(uncapped()), f.conv(greedy(8))
	release, err := f.m.Exclusive(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, conv := range []int64{a, b, c} {
		if _, err := f.m.Send(conv, "Once upon a time"); err != nil {
			t.Fatal(err)
		}
	}
	release()
	st, err := f.m.Status()
	if err != nil {
		t.Fatal(err)
	}
	if st.MaxAnswers != 2 || !slices.Equal(st.Answering, []int64{a, b}) || !slices.Equal(st.Queued, []int64{c}) {
		t.Fatalf("status with the cap at 2: %+v", st)
	}
	evs := f.ev.until(t, func(ev api.Event) bool { q, ok := ev.(api.Queued); return ok && q.Conv == c && q.Position == 1 })
	if tc := collect(t, evs, c); tc.text != "" {
		t.Fatalf("the third answer ran beyond the cap: %q", tc.text)
	}
	if err := f.m.Stop(a); err != nil {
		t.Fatal(err)
	}
	evs = f.waitAll(a, c)
	if tc := collect(t, evs, c); tc.done.Reason != api.ReasonLength || tc.text == "" {
		t.Fatalf("the third answer once the first stopped: %+v %q", tc.done, tc.text)
	}
	if err := f.m.SetSetting(SettingMaxAnswers, "5"); err != nil {
		t.Fatal(err)
	}
	if st, _ := f.m.Status(); st.MaxAnswers != 5 {
		t.Fatalf("after setting the cap to 5: %d", st.MaxAnswers)
	}
	f.m.Stop(b)
}

// TestFairQueue: beyond the cap, the next answer to start is the oldest
// of the source with the fewest running: a window chat asked after an
// API client's four requests starts with the first of them.
func TestFairQueue(t *testing.T) {
	f := newFixture(t, Options{MaxAnswers: 2})
	f.load(testdata.Stories260K(t))
	release, err := f.m.Exclusive(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	set := uncapped() // long enough to be running still when Status looks
	ctx, cancel := context.WithCancel(context.Background())
	var answers []api.Answer
	for range 4 {
		ans, err := f.m.Answer(ctx, api.Request{Prompt: "Once upon a time", Settings: set, Source: "client"})
		if err != nil {
			t.Fatal(err)
		}
		answers = append(answers, ans)
	}
	w := f.conv(set)
	if _, err := f.m.Send(w, "The little dog"); err != nil {
		t.Fatal(err)
	}
	st, _ := f.m.Status()
	if !st.Exclusive || len(st.Answering) != 0 || st.Requests != 0 || st.RequestsQueued != 4 || !slices.Equal(st.Queued, []int64{w}) {
		t.Fatalf("while the machine is held: %+v", st)
	}
	release()
	st, _ = f.m.Status()
	if !slices.Equal(st.Answering, []int64{w}) || st.Requests != 1 || st.RequestsQueued != 3 {
		t.Fatalf("after release the window's answer should run beside the client's first: %+v", st)
	}
	cancel()
	for _, ans := range answers {
		if _, done := drain(t, ans); done.Reason != api.ReasonCancelled {
			t.Errorf("a cancelled request ended %+v", done)
		}
	}
	f.m.Stop(w)
	f.wait(w)
}

// waitAll reads events until every conversation of convs has had its
// Done, and returns them.
func (f *fixture) waitAll(convs ...int64) []api.Event {
	f.t.Helper()
	left := map[int64]bool{}
	for _, c := range convs {
		left[c] = true
	}
	return f.ev.until(f.t, func(ev api.Event) bool {
		if d, ok := ev.(api.Done); ok {
			delete(left, d.Conv)
		}
		return len(left) == 0
	})
}

// drain reads an answer to its end and returns its text and AnswerDone.
func drain(t *testing.T, ans api.Answer) (string, api.AnswerDone) {
	t.Helper()
	var text string
	var done api.AnswerDone
	for ev := range ans.Events {
		switch e := ev.(type) {
		case api.AnswerText:
			if !e.Reasoning {
				text += e.Text
			}
		case api.AnswerDone:
			done = e
		}
	}
	return text, done
}

// TestExclusive: while someone holds the machine no answer starts and the
// batch stands still; released, the waiting answer runs.
func TestExclusive(t *testing.T) {
	f, _ := storiesFixture(t)
	release, err := f.m.Exclusive(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	conv := f.conv(greedy(8))
	if _, err := f.m.Send(conv, "Once upon a time"); err != nil {
		t.Fatal(err)
	}
	evs := f.ev.until(t, func(ev api.Event) bool { q, ok := ev.(api.Queued); return ok && q.Conv == conv })
	if tr := collect(t, evs, conv); tr.text != "" {
		t.Fatalf("an answer ran while the machine was held: %q", tr.text)
	}
	release()
	release() // twice is once
	if tr := f.wait(conv); tr.done.Reason != api.ReasonLength {
		t.Fatalf("after release: %+v", tr.done)
	}
	if st, _ := f.m.Status(); st.Exclusive {
		t.Fatalf("still exclusive after release: %+v", st)
	}
}

// TestStopOneOfMany: stopping one of two answers running together ends
// it within one token; the other runs on to what it gives alone.
func TestStopOneOfMany(t *testing.T) {
	var f *fixture
	var a int64
	stopped := make(chan error, 1)
	f = newFixture(t, Options{tokenHook: func(c int64, n int) {
		if c == a && n == 3 {
			stopped <- f.m.Stop(c)
		}
	}})
	path := testdata.Stories260K(t)
	f.load(path)
	a, b := f.conv(greedy(200)), f.conv(greedy(40))
	release, err := f.m.Exclusive(context.Background()) // so that they start together
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.m.Send(b, "The little dog"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.m.Send(a, "Once upon a time"); err != nil {
		t.Fatal(err)
	}
	release()
	evs := f.waitAll(a, b)
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
	if ta := collect(t, evs, a); ta.done.Reason != api.ReasonCancelled || ta.stats.GenTokens < 3 || ta.stats.GenTokens > 4 {
		t.Fatalf("stopped at token 3: %+v after %d tokens", ta.done, ta.stats.GenTokens)
	}
	if tb := collect(t, evs, b); tb.text != reference(t, path, greedy(40), "The little dog") {
		t.Fatalf("the other answer, beside a stopped one: %q", tb.text)
	}
}
