package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"time"

	api "github.com/churon/churon/app/api/session"
	"github.com/churon/churon/app/kvcache"
	"github.com/churon/churon/app/session"
	"github.com/churon/churon/app/store"
	"github.com/churon/churon/engine"
	"github.com/churon/churon/engine/chat"
	"github.com/churon/churon/internal/units"
)

// followupJSON is the documented shape of `churon bench --followup --json`.
//
// The same follow-up (a short question after HistoryTokens of history) is
// answered three times, greedily: cold (a fresh KV cache: the whole
// conversation is processed), warm (the conversation's cache is in RAM, as
// after the previous answer) and restored (a fresh process reads the
// conversation's snapshot from disk first). TTFTs are what the person
// waits for the first token: restored_ttft_ms includes restore_ms.
type followupJSON struct {
	Model          string `json:"model"`
	Type           string `json:"type"`
	Threads        int    `json:"threads"`
	KVType         string `json:"kv_type"`
	Context        int    `json:"context"`
	HistoryTokens  int    `json:"history_tokens"` // the conversation before the follow-up
	PromptTokens   int    `json:"prompt_tokens"`  // the follow-up's whole prompt
	SnapshotBytes  int64  `json:"snapshot_bytes"` // the conversation's snapshot on disk
	GenTokens      int    `json:"gen_tokens"`     // per answer
	AnswersMatch   bool   `json:"answers_match"`  // the three answers are the same text
	ColdProcessed  int    `json:"cold_processed"` // prompt tokens run through the model
	WarmProcessed  int    `json:"warm_processed"` //
	RestoreProcess int    `json:"restored_processed"`

	ColdTTFTMs      float64 `json:"cold_ttft_ms"`
	WarmTTFTMs      float64 `json:"warm_ttft_ms"`
	RestoredTTFTMs  float64 `json:"restored_ttft_ms"`
	RestoreMs       float64 `json:"restore_ms"`
	WarmSpeedup     float64 `json:"warm_speedup"`     // cold / warm
	RestoredSpeedup float64 `json:"restored_speedup"` // cold / restored
}

// followupChildFlag runs one restored answer in a child process; it is
// not in the usage text.
const followupChildFlag = "--followup-child"

// followupChild makes the command that runs `churon bench
// --followup-child …`: this executable again. Tests replace it.
var followupChild = func(args []string) (*exec.Cmd, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("bench: find this executable: %w", err)
	}
	return exec.Command(exe, append([]string{"bench"}, args...)...), nil
}

// followupTurn is one measured answer.
type followupTurn struct {
	Text      string  `json:"text"`
	TTFTMs    float64 `json:"ttft_ms"`
	RestoreMs float64 `json:"restore_ms"`
	Prompt    int     `json:"prompt_tokens"`
	Reused    int     `json:"reused"`
	Processed int     `json:"processed"`
	Gen       int     `json:"gen_tokens"`
	From      string  `json:"from"`
}

// Deterministic history: alternating questions and answers in Korean and
// English, numbered so that no two turns are the same text.
var (
	followupQuestions = []string{
		"서울에서 부산까지 기차로 가면 얼마나 걸리나요? 주말에 가족과 함께 여행을 계획하고 있어요.",
		"Could you explain how a KV cache speeds up text generation in a transformer model?",
		"김치찌개를 맛있게 끓이는 방법을 단계별로 알려 주세요. 돼지고기와 두부를 넣고 싶어요.",
		"What is the difference between a process and a thread, and when should I use each?",
		"한국어 존댓말과 반말의 차이를 예문과 함께 설명해 주시겠어요?",
		"Summarise the main causes of the French Revolution in a few sentences.",
	}
	followupAnswers = []string{
		"KTX를 타면 서울역에서 부산역까지 보통 2시간 30분 정도 걸립니다. 주말에는 표가 빨리 매진되니 미리 예매하는 것이 좋고, 가족석을 이용하면 마주 보고 앉을 수 있어 편합니다.",
		"During generation every new token attends to all previous tokens. Without a cache, the keys and values of the whole prefix would be recomputed at every step; the cache stores them once, so each step only computes the newest token's projections and reads the rest from memory.",
		"먼저 돼지고기를 냄비에 볶다가 잘 익은 김치를 넣고 함께 볶습니다. 물이나 멸치 육수를 붓고 끓으면 고춧가루와 마늘을 넣습니다. 마지막으로 두부와 대파를 넣고 5분 정도 더 끓이면 완성입니다.",
		"A process has its own address space, while threads share the memory of the process they belong to. Processes isolate failures and suit independent programs; threads are cheaper to create and communicate through shared memory, which suits parallel work on the same data.",
		"존댓말은 상대를 높이는 말로 처음 만난 사람이나 윗사람에게 씁니다. 예를 들어 \"어디 가세요?\"는 존댓말이고 \"어디 가?\"는 반말입니다. 반말은 친한 친구나 아랫사람에게 씁니다.",
		"Royal debt from foreign wars, an unfair tax system that spared the nobility and clergy, poor harvests that raised the price of bread, and Enlightenment ideas about rights and representation together pushed the Third Estate to demand change in 1789.",
	}
	followupQuestion = "Thanks! Now sum it up in one sentence."
)

// followupHistory returns history messages, ending with a question,
// whose prompt with the model's template reaches want tokens.
func followupHistory(ctx context.Context, m *engine.Model, want int) ([]store.Message, error) {
	var msgs []store.Message
	var cm []chat.Message
	for i := 0; ; i++ {
		q := fmt.Sprintf("(%d) %s", i+1, followupQuestions[i%len(followupQuestions)])
		msgs = append(msgs, store.Message{Role: store.RoleUser, Content: q})
		cm = append(cm, chat.Message{Role: "user", Content: q})
		ids, _, err := m.ChatTokens(ctx, cm)
		if err != nil {
			return nil, err
		}
		if len(ids) >= want || i > 10000 {
			return msgs, nil
		}
		a := fmt.Sprintf("(%d) %s", i+1, followupAnswers[i%len(followupAnswers)])
		msgs = append(msgs, store.Message{Role: store.RoleAssistant, Content: a})
		cm = append(cm, chat.Message{Role: "assistant", Content: a})
	}
}

// followupSettings are greedy, capped at n tokens, with the context given.
func followupSettings(n, ctxLen int) api.Settings {
	s := session.DefaultSettings()
	s.Temperature, s.TopK, s.TopP, s.MinP, s.RepeatPenalty = 0, 0, 1, 0, 1
	s.Seed, s.MaxTokens, s.Context = 1, n, ctxLen
	return s
}

// followupRun is one manager over a folder holding chats.db and kv/.
type followupRun struct {
	st   *store.Store
	m    *session.Manager
	disk *kvcache.Store
}

func openFollowupRun(ctx context.Context, dir string, threads int, kv engine.KVType, withDisk bool) (*followupRun, error) {
	st, err := store.Open(ctx, filepath.Join(dir, "chats.db"))
	if err != nil {
		return nil, err
	}
	r := &followupRun{st: st}
	opt := session.Options{Threads: threads, KVType: kv}
	if withDisk {
		if r.disk, err = kvcache.Open(filepath.Join(dir, "kv"), 0); err != nil {
			st.Close()
			return nil, err
		}
		opt.Disk = r.disk
	}
	r.m = session.New(st, opt)
	return r, nil
}

func (r *followupRun) close() {
	r.m.Close()
	for range r.m.Events() {
	}
	r.st.Close()
}

// load loads the model and waits for it.
func (r *followupRun) load(ctx context.Context, path string) (api.ModelInfo, error) {
	if err := r.m.LoadModel(path); err != nil {
		return api.ModelInfo{}, err
	}
	for {
		select {
		case <-ctx.Done():
			return api.ModelInfo{}, ctx.Err()
		case ev, ok := <-r.m.Events():
			if !ok {
				return api.ModelInfo{}, api.ErrClosed
			}
			switch e := ev.(type) {
			case api.ModelLoaded:
				return e.Info, nil
			case api.Error:
				return api.ModelInfo{}, e.Err
			}
		}
	}
}

// send asks the follow-up and waits for its answer; with untilSaved it
// also waits until the conversation's snapshot on disk covers the cache.
func (r *followupRun) send(ctx context.Context, conv int64, text string, untilSaved bool) (followupTurn, error) {
	var t followupTurn
	if _, err := r.m.Send(conv, text); err != nil {
		return t, err
	}
	var done, saved bool
	timeout := time.After(10 * time.Minute)
	for !done || (untilSaved && !saved) {
		var ev api.Event
		select {
		case <-ctx.Done():
			r.m.Stop(conv)
			return t, ctx.Err()
		case <-timeout:
			r.m.Stop(conv)
			return t, errors.New("bench: no answer (or no snapshot) within 10 minutes")
		case e, ok := <-r.m.Events():
			if !ok {
				return t, api.ErrClosed
			}
			ev = e
		}
		switch e := ev.(type) {
		case api.Stats:
			if e.Conv == conv {
				t.TTFTMs, t.RestoreMs = ms(e.TTFT), ms(e.Restore)
				t.Prompt, t.Reused, t.Processed, t.Gen, t.From = e.PromptTokens, e.Reused, e.Processed, e.GenTokens, string(e.From)
			}
		case api.Done:
			if e.Conv == conv {
				if e.Reason == api.ReasonError {
					return t, e.Err
				}
				done = true
			}
		case api.CacheState:
			if e.Conv == conv && done && e.Where == api.CacheRAM && e.DiskTokens == e.Tokens {
				saved = true
			}
		case api.Error:
			return t, fmt.Errorf("bench: %s: %w", e.Op, e.Err)
		}
	}
	// The stored text is the answer whole, whatever the events merged.
	msgs, err := r.st.Messages(ctx, conv)
	if err != nil {
		return t, err
	}
	t.Text = msgs[len(msgs)-1].Content
	return t, nil
}

// seedConversation stores the history as conversation 1 of a fresh
// database.
func seedConversation(ctx context.Context, st *store.Store, hist []store.Message) (int64, error) {
	c, err := st.CreateConversation(ctx, store.Conversation{Title: "bench --followup"})
	if err != nil {
		return 0, err
	}
	for _, m := range hist {
		m.ConversationID = c.ID
		if _, err := st.AddMessage(ctx, m); err != nil {
			return 0, err
		}
	}
	return c.ID, nil
}

func benchFollowup(ctx context.Context, stdout, stderr io.Writer, model string, threads, history, n int, kvName string, asJSON bool) error {
	kv, err := kvType(kvName)
	if err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "churon-bench-followup-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	say := func(format string, args ...any) {
		if !asJSON {
			fmt.Fprintf(stderr, format+"\n", args...)
		}
	}

	// The history, measured with the model's own template and tokenizer.
	em, err := engine.Load(ctx, model, engine.LoadOptions{Threads: threads})
	if err != nil {
		return err
	}
	hist, err := followupHistory(ctx, em, history)
	info := em.Info()
	em.Close()
	if err != nil {
		return err
	}
	ctxLen := (history + 512 + 3*n + 255) / 256 * 256
	set := followupSettings(n, ctxLen)

	// Prime: the conversation's last answer, which leaves its KV cache in
	// RAM and its snapshot on disk.
	dirA := filepath.Join(work, "a")
	a, err := openFollowupRun(ctx, dirA, threads, kv, true)
	if err != nil {
		return err
	}
	defer a.close()
	if _, err := a.load(ctx, model); err != nil {
		return err
	}
	// The last question of the history is asked for real: its answer is
	// the model's own.
	conv, err := seedConversation(ctx, a.st, hist[:len(hist)-1])
	if err != nil {
		return err
	}
	if err := a.m.SetSettings(conv, set); err != nil {
		return err
	}
	lastQ := hist[len(hist)-1].Content
	prime, err := a.send(ctx, conv, lastQ, true)
	if err != nil {
		return fmt.Errorf("bench: prime the conversation: %w", err)
	}
	histTokens := prime.Prompt + prime.Gen
	say("history: %d messages, %d tokens, of which %d generated now (first token after %.0f ms); context %d",
		len(hist)+1, histTokens, prime.Gen, prime.TTFTMs, ctxLen)
	entry, ok := a.disk.Stat("conv-" + fmt.Sprint(conv))
	if !ok {
		return errors.New("bench: the conversation's snapshot was not written")
	}

	// The same conversation for the cold run (no snapshot) and for the
	// restored run (with a copy of the snapshot), in their own folders.
	prefix := append(append([]store.Message(nil), hist[:len(hist)-1]...),
		store.Message{Role: store.RoleUser, Content: lastQ},
		store.Message{Role: store.RoleAssistant, Content: prime.Text, FinishReason: "length"})
	dirC, dirR := filepath.Join(work, "cold"), filepath.Join(work, "restored")
	for _, d := range []string{dirC, dirR} {
		if err := os.MkdirAll(filepath.Join(d, "kv"), 0o755); err != nil {
			return err
		}
		st, err := store.Open(ctx, filepath.Join(d, "chats.db"))
		if err != nil {
			return err
		}
		id, err := seedConversation(ctx, st, prefix)
		if err == nil {
			c, _ := st.Conversation(ctx, id)
			a2, _ := a.st.Conversation(ctx, conv)
			c.SystemPrompt, c.Sampler = a2.SystemPrompt, a2.Sampler
			err = st.UpdateConversation(ctx, c)
		}
		st.Close()
		if err != nil {
			return err
		}
		if id != conv {
			return fmt.Errorf("bench: conversation %d in the copy, %d in the original", id, conv)
		}
	}
	if err := copyFile(filepath.Join(dirA, "kv", entry.Key+".kv"), filepath.Join(dirR, "kv", entry.Key+".kv")); err != nil {
		return err
	}

	// Warm: the cache is in RAM.
	warm, err := a.send(ctx, conv, followupQuestion, false)
	if err != nil {
		return fmt.Errorf("bench: warm follow-up: %w", err)
	}
	say("warm: %.1f ms (%d reused, %d processed)", warm.TTFTMs, warm.Reused, warm.Processed)
	a.close()

	// Cold: a fresh cache, no snapshot.
	c, err := openFollowupRun(ctx, dirC, threads, kv, false)
	if err != nil {
		return err
	}
	if _, err := c.load(ctx, model); err != nil {
		c.close()
		return err
	}
	cold, err := c.send(ctx, conv, followupQuestion, false)
	c.close()
	if err != nil {
		return fmt.Errorf("bench: cold follow-up: %w", err)
	}
	say("cold: %.1f ms (%d processed)", cold.TTFTMs, cold.Processed)

	// Restored: a fresh process reads the snapshot.
	cmd, err := followupChild([]string{followupChildFlag, dirR, "-m", model, "-t", fmt.Sprint(threads), "--kv", kvName})
	if err != nil {
		return err
	}
	var childErr strings.Builder
	cmd.Stderr = &childErr
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("bench: restored follow-up (child process): %w: %s", err, childErr.String())
	}
	var restored followupTurn
	if err := json.Unmarshal(out, &restored); err != nil {
		return fmt.Errorf("bench: restored follow-up: %w: %q", err, out)
	}
	if restored.From != string(api.CacheDisk) {
		return fmt.Errorf("bench: the fresh process did not use the snapshot (%+v): %s", restored, childErr.String())
	}
	say("restored: %.1f ms, of which %.1f ms reading the snapshot (%d reused, %d processed)", restored.TTFTMs, restored.RestoreMs, restored.Reused, restored.Processed)

	r := followupJSON{
		Model: model, Type: info.FileType, Threads: info.Threads, KVType: kv.String(), Context: ctxLen,
		HistoryTokens: histTokens, PromptTokens: cold.Prompt, SnapshotBytes: entry.Bytes, GenTokens: n,
		AnswersMatch:  warm.Text == cold.Text && cold.Text == restored.Text,
		ColdProcessed: cold.Processed, WarmProcessed: warm.Processed, RestoreProcess: restored.Processed,
		ColdTTFTMs: cold.TTFTMs, WarmTTFTMs: warm.TTFTMs, RestoredTTFTMs: restored.TTFTMs, RestoreMs: restored.RestoreMs,
	}
	if warm.TTFTMs > 0 {
		r.WarmSpeedup = cold.TTFTMs / warm.TTFTMs
	}
	if restored.TTFTMs > 0 {
		r.RestoredSpeedup = cold.TTFTMs / restored.TTFTMs
	}
	if asJSON {
		return writeJSON(stdout, r)
	}
	fmt.Fprintf(stdout, "follow-up after %d tokens of history (%s, %d threads, KV %s):\n", histTokens, info.FileType, info.Threads, r.KVType)
	fmt.Fprintf(stdout, "  cold      %9.1f ms  (%d prompt tokens processed)\n", r.ColdTTFTMs, r.ColdProcessed)
	fmt.Fprintf(stdout, "  warm      %9.1f ms  (%d processed)  %.1f× faster\n", r.WarmTTFTMs, r.WarmProcessed, r.WarmSpeedup)
	fmt.Fprintf(stdout, "  restored  %9.1f ms  (%d processed, snapshot of %s read in %.1f ms)  %.1f× faster\n",
		r.RestoredTTFTMs, r.RestoreProcess, units.Bytes(r.SnapshotBytes), r.RestoreMs, r.RestoredSpeedup)
	if !r.AnswersMatch {
		fmt.Fprintln(stdout, "  warning: the three answers differ")
	}
	return nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// followupChildMain answers the follow-up in the conversation of dir in
// this (fresh) process and prints the turn as JSON.
func followupChildMain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("bench "+followupChildFlag, stderr)
	model := fs.String("m", "", "")
	threads := fs.Int("t", 0, "")
	kvName := fs.String("kv", "f16", "")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 || *model == "" {
		return usagef("%s DIR -m MODEL", followupChildFlag)
	}
	kv, err := engine.ParseKVType(*kvName)
	if err != nil {
		return usagef("--kv %q", *kvName)
	}
	r, err := openFollowupRun(ctx, pos[0], *threads, kv, true)
	if err != nil {
		return err
	}
	defer r.close()
	if _, err := r.load(ctx, *model); err != nil {
		return err
	}
	// CHURON_FOLLOWUP_CPUPROFILE names a file for a CPU profile of the
	// restored answer: the restore in a fresh process is what the bench
	// is about, and no other profile sees it.
	if path := os.Getenv("CHURON_FOLLOWUP_CPUPROFILE"); path != "" {
		f, err := os.Create(path)
		if err != nil {
			return fmt.Errorf("bench: cpu profile: %w", err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return fmt.Errorf("bench: cpu profile: %w", err)
		}
		defer pprof.StopCPUProfile()
	}
	t, err := r.send(ctx, 1, followupQuestion, false)
	if err != nil {
		return err
	}
	return json.NewEncoder(stdout).Encode(t)
}
