package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	api "github.com/churon/churon/app/api/session"
	"github.com/churon/churon/app/remote"
	"github.com/churon/churon/app/session"
	"github.com/churon/churon/app/store"
	"github.com/churon/churon/engine"
)

func init() {
	register("chat", "chat in the terminal, or run one stored turn (--message; --json)", runChat)
}

// chatJSON is the documented shape of `churon chat --message … --json`.
type chatJSON struct {
	ConversationID        int64   `json:"conversation_id"`
	UserMessageID         int64   `json:"user_message_id"`
	AssistantMessageID    int64   `json:"assistant_message_id"`
	Model                 string  `json:"model"`
	Text                  string  `json:"text"`
	FinishReason          string  `json:"finish_reason"`
	Error                 string  `json:"error,omitempty"`
	TTFTMs                float64 `json:"ttft_ms"`
	PromptTPS             float64 `json:"prompt_tps"`
	GenTPS                float64 `json:"gen_tps"`
	PromptTokens          int     `json:"prompt_tokens"`
	PromptTokensReused    int     `json:"prompt_tokens_reused"`
	PromptTokensProcessed int     `json:"prompt_tokens_processed"`
	// PromptCache is where the reused tokens came from: "ram", "disk" (a
	// snapshot written by an earlier run, read back in RestoreMs) or
	// "none".
	PromptCache string  `json:"prompt_cache"`
	RestoreMs   float64 `json:"restore_ms"`
	// MessagesDropped: the oldest messages left out of the prompt because
	// the conversation outgrew the context (a notice says so in the chat).
	MessagesDropped int    `json:"messages_dropped"`
	GenTokens       int    `json:"gen_tokens"`
	Seed            uint64 `json:"seed"`
}

func runChat(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagsWithHelp("chat", stderr, "Usage:\n  churon chat -m MODEL [--conversation ID]                 interactive chat (/new, /quit)\n  churon chat -m MODEL [--conversation ID | --new] --message TEXT [--json]",
		"Answers are stored in the chat database ($CHURON_HOME, else the XDG data folder). Sampling\nflags given here are saved as the conversation's settings; a new conversation's answers stop at -n\ntokens. The defaults are the desktop app's chat defaults.")
	var mf modelFlags
	var sf samplingFlags
	mf.register(fs)
	sf.register(fs, chatDefaults())
	convID := fs.Int64("conversation", 0, "continue the conversation with this `id`")
	newConv := fs.Bool("new", false, "start a new conversation (the default)")
	message := fs.String("message", "", "send this `text`, print the answer and exit (scripted use)")
	system := fs.String("system", "", "system prompt, saved with the conversation")
	asJSON := fs.Bool("json", false, "with --message: print one JSON object instead of streaming text")
	noSnap := fs.Bool("no-snapshots", false, "neither read nor write KV cache snapshots (every run processes the whole conversation)")
	remoteModel := fs.String("remote", "", "answer with `CONN/MODEL`, a model a remote connection serves (churon remote add)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if *remoteModel != "" {
		if mf.path != "" {
			return usagef("-m and --remote exclude each other")
		}
		path := api.RemotePrefix + strings.TrimPrefix(*remoteModel, api.RemotePrefix)
		if !api.IsRemote(path) {
			return usagef("--remote %q: want CONN/MODEL (churon remote list shows them)", *remoteModel)
		}
		mf.path = path
	}
	if len(pos) > 0 {
		return usagef("unexpected argument %q (use --message TEXT)", pos[0])
	}
	given := givenFlags(fs)
	if err := mf.orDemo(ctx, stderr); err != nil {
		return err
	}
	switch {
	case *newConv && given["conversation"]:
		return usagef("--new and --conversation exclude each other")
	case *asJSON && !given["message"]:
		return usagef("--json needs --message")
	case given["message"] && strings.TrimSpace(*message) == "":
		return usagef("--message is empty")
	case given["ignore-eos"]:
		return usagef("--ignore-eos is not available in chat")
	}
	kv, err := kvType(mf.kv)
	if err != nil {
		return err
	}
	override, err := chatOverrides(given, &sf, &mf, *system)
	if err != nil {
		return err
	}

	st, m, err := openSession(ctx, &mf, kv, stderr, !*noSnap, 0)
	if err != nil {
		return err
	}
	defer st.Close()
	c := &chatter{ctx: ctx, m: m, st: st, stdout: stdout, stderr: stderr, override: override, conv: *convID}
	defer func() {
		m.Close()
		for range m.Events() { // deliver the rest so the manager's goroutines end
		}
	}()
	if c.conv != 0 {
		conv, err := st.Conversation(ctx, c.conv)
		if err != nil {
			return err
		}
		if conv.Deleted() {
			return fmt.Errorf("conversation %d is deleted", c.conv)
		}
	}
	if err := c.load(mf.path, !*asJSON && !given["message"]); err != nil {
		return withPath(mf.path, err)
	}
	if given["message"] {
		return c.scripted(*message, *asJSON)
	}
	return c.interactive()
}

func kvType(s string) (engine.KVType, error) {
	t, err := engine.ParseKVType(s)
	if err != nil {
		return 0, usagef("--kv %q: want f16, f32 or q8_0", s)
	}
	return t, nil
}

// chatOverrides turns the flags given on the command line into a change
// of the conversation's settings; flags left out keep what the
// conversation has.
func chatOverrides(given map[string]bool, sf *samplingFlags, mf *modelFlags, system string) (func(s *api.Settings, fresh bool), error) {
	if given["seed"] && sf.seed < -1 {
		return nil, usagef("--seed %d: want -1 (random) or a seed ≥ 0", sf.seed)
	}
	if given["n"] && sf.n < 0 {
		return nil, usagef("-n %d is negative", sf.n)
	}
	if given["c"] && mf.ctxLen < 0 {
		return nil, usagef("-c %d is negative", mf.ctxLen)
	}
	f := func(s *api.Settings, fresh bool) {
		set := func(name string, apply func()) {
			if given[name] {
				apply()
			}
		}
		// A new conversation gets the documented -n (256) even when it is
		// not given: the session's own default, 0, lets an answer run to
		// the end of the context. A conversation continued keeps its own.
		if fresh && !given["n"] {
			s.MaxTokens = sf.n
		}
		set("n", func() { s.MaxTokens = sf.n })
		set("c", func() { s.Context = mf.ctxLen })
		set("temp", func() { s.Temperature = float32(sf.temp) })
		set("top-k", func() { s.TopK = sf.topK })
		set("top-p", func() { s.TopP = float32(sf.topP) })
		set("min-p", func() { s.MinP = float32(sf.minP) })
		set("repeat-penalty", func() { s.RepeatPenalty = float32(sf.repeat) })
		set("presence-penalty", func() { s.PresencePenalty = float32(sf.presence) })
		set("frequency-penalty", func() { s.FrequencyPenalty = float32(sf.freq) })
		set("repeat-last-n", func() { s.RepeatLastN = sf.window })
		set("seed", func() { s.Seed = sf.seed })
		set("stop", func() { s.Stop = append([]string(nil), sf.stops...) })
		set("system", func() { s.SystemPrompt = system })
	}
	// Check the flags now, on the defaults, so a bad value is a usage
	// error before anything loads.
	probe := session.DefaultSettings()
	f(&probe, true)
	if err := session.Validate(probe); err != nil {
		return nil, usagef("%v", err)
	}
	return f, nil
}

// chatter runs turns through the session manager, reading its events.
type chatter struct {
	ctx            context.Context
	m              *session.Manager
	st             *store.Store
	stdout, stderr io.Writer
	override       func(s *api.Settings, fresh bool) // fresh: a conversation this run created
	conv           int64                             // 0 until the first message creates one
	model          api.ModelInfo
}

// next returns the manager's next event, or the context's error.
func (c *chatter) next() (api.Event, error) {
	select {
	case ev, ok := <-c.m.Events():
		if !ok {
			return nil, api.ErrClosed
		}
		return ev, nil
	case <-c.ctx.Done():
		return nil, c.ctx.Err()
	}
}

func (c *chatter) load(path string, verbose bool) error {
	if err := c.m.LoadModel(path); err != nil {
		return err
	}
	for {
		ev, err := c.next()
		if err != nil {
			return err
		}
		switch e := ev.(type) {
		case api.ModelLoaded:
			c.model = e.Info
			if verbose {
				fmt.Fprintf(c.stderr, "churon: %s (%s, %s) on %s\n", e.Info.Name, e.Info.Architecture, e.Info.FileType, e.Info.Backend)
				if !e.Info.HasTemplate {
					fmt.Fprintln(c.stderr, "churon: the model has no chat template; using a generic ChatML format")
				}
			}
			return nil
		case api.Error:
			return e.Err
		}
	}
}

// conversation returns the conversation to send to, creating it (with the
// command line's settings) on first use.
func (c *chatter) conversation() (int64, error) {
	fresh := c.conv == 0
	if fresh {
		conv, err := c.m.NewConversation("")
		if err != nil {
			return 0, err
		}
		c.conv = conv.ID
	}
	set, err := c.m.Settings(c.conv)
	if err != nil {
		return 0, err
	}
	before := fmt.Sprintf("%+v", set)
	c.override(&set, fresh)
	if fmt.Sprintf("%+v", set) != before {
		if err := c.m.SetSettings(c.conv, set); err != nil {
			return 0, err
		}
	}
	return c.conv, nil
}

// result is one finished turn.
type result struct {
	user, answer int64
	stats        api.Stats
	done         api.Done
}

// turn sends text and waits for the answer, streaming it to w when w is
// not nil. Cancelling the context stops the answer (it is stored as
// cancelled) and returns the context's error.
func (c *chatter) turn(text string, w io.Writer) (result, error) {
	var r result
	conv, err := c.conversation()
	if err != nil {
		return r, err
	}
	u, err := c.m.Send(conv, text)
	if err != nil {
		return r, err
	}
	r.user = u.ID
	var interrupted error
	for {
		var ev api.Event
		select {
		case e, ok := <-c.m.Events():
			if !ok {
				return r, api.ErrClosed
			}
			ev = e
		case <-c.ctx.Done():
			if interrupted == nil {
				interrupted = c.ctx.Err()
				if err := c.m.Stop(conv); err != nil {
					return r, err
				}
			}
			// Keep reading until the answer is saved and Done.
			ev = <-c.m.Events()
		}
		switch e := ev.(type) {
		case api.MessageAdded:
			if e.Message.ConversationID == conv && e.Message.Role == store.RoleAssistant {
				r.answer = e.Message.ID
			}
		case api.Token:
			if e.Reasoning {
				// Thinking goes to stderr, apart from the answer.
				if e.Conv == conv {
					io.WriteString(c.stderr, e.Text)
				}
				continue
			}
			if w != nil && e.Conv == conv {
				if _, err := io.WriteString(w, e.Text); err != nil {
					c.m.Stop(conv)
				}
			}
		case api.Stats:
			if e.Conv == conv {
				r.stats = e
			}
		case api.Error:
			fmt.Fprintf(c.stderr, "churon: %s: %v\n", e.Op, e.Err)
		case api.DeviceFallback:
			fmt.Fprintf(c.stderr, "churon: %v (the answer goes on)\n", e.Err)
		case api.ModelLoaded:
			c.model = e.Info // a new placement, after a device failed
		case api.Done:
			if e.Conv != conv {
				continue
			}
			r.done = e
			if interrupted != nil {
				return r, interrupted
			}
			if e.Reason == api.ReasonError {
				return r, e.Err
			}
			return r, nil
		case nil:
			return r, api.ErrClosed
		}
	}
}

func (c *chatter) scripted(text string, asJSON bool) error {
	var w io.Writer
	var bw *bufio.Writer
	if !asJSON {
		bw = bufio.NewWriter(c.stdout)
		w = flushWriter{bw}
	}
	r, err := c.turn(text, w)
	if !asJSON {
		if bw != nil {
			fmt.Fprintln(bw)
			bw.Flush()
		}
		if r.answer != 0 {
			c.printStats(r)
		}
		return err
	}
	out := chatJSON{
		ConversationID: c.conv, UserMessageID: r.user, AssistantMessageID: r.answer, Model: c.model.Path,
		FinishReason: string(r.done.Reason),
		TTFTMs:       float64(r.stats.TTFT.Microseconds()) / 1000, PromptTPS: r.stats.PromptTPS, GenTPS: r.stats.GenTPS,
		PromptTokens: r.stats.PromptTokens, PromptTokensReused: r.stats.Reused, PromptTokensProcessed: r.stats.Processed,
		PromptCache: string(r.stats.From), RestoreMs: float64(r.stats.Restore.Microseconds()) / 1000,
		MessagesDropped: r.stats.Dropped, GenTokens: r.stats.GenTokens, Seed: r.stats.Seed,
	}
	if out.PromptCache == "" {
		out.PromptCache = string(api.CacheNone)
	}
	if err != nil {
		out.Error = err.Error()
		if out.FinishReason == "" {
			out.FinishReason = string(api.ReasonError)
		}
	}
	if r.answer != 0 {
		// The text as stored, which is what the GUI will show.
		msg, serr := c.st.Message(c.ctx, r.answer)
		if serr != nil && err == nil {
			err = serr
		}
		out.Text = msg.Content
	}
	if jerr := writeJSON(c.stdout, out); jerr != nil && err == nil {
		err = jerr
	}
	return err
}

func (c *chatter) printStats(r result) {
	s := r.stats
	reused := fmt.Sprintf("%d reused", s.Reused)
	if s.From == api.CacheDisk {
		reused += fmt.Sprintf(" from a snapshot read in %.0f ms", float64(s.Restore.Microseconds())/1000)
	}
	fmt.Fprintf(c.stderr, "[conversation %d, message %d: %d prompt tokens (%s, %d processed), %d generated, %s; TTFT %.0f ms, prompt %.1f tok/s, generation %.1f tok/s, seed %d]\n",
		c.conv, r.answer, s.PromptTokens, reused, s.Processed, s.GenTokens, r.done.Reason, float64(s.TTFT.Microseconds())/1000, s.PromptTPS, s.GenTPS, s.Seed)
	if s.Dropped > 0 {
		fmt.Fprintf(c.stderr, "[the oldest %d messages no longer fit in the context: the model does not see them]\n", s.Dropped)
	}
}

func (c *chatter) interactive() error {
	lines := make(chan string)
	readErr := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(stdin)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			case <-c.ctx.Done():
				return
			}
		}
		readErr <- sc.Err()
		close(lines)
	}()
	if c.conv != 0 {
		fmt.Fprintf(c.stderr, "Continuing conversation %d. ", c.conv)
	}
	fmt.Fprintln(c.stderr, "Type a message and press Enter. /new starts a new conversation, /quit ends. Ctrl-C stops.")
	bw := bufio.NewWriter(c.stdout)
	defer bw.Flush()
	for {
		fmt.Fprint(c.stderr, "> ")
		var line string
		select {
		case l, ok := <-lines:
			if !ok {
				fmt.Fprintln(c.stderr)
				return <-readErr
			}
			line = l
		case <-c.ctx.Done():
			return nil
		}
		switch cmd := strings.TrimSpace(line); {
		case cmd == "":
			continue
		case cmd == "/quit" || cmd == "/exit":
			return nil
		case cmd == "/new":
			c.conv = 0
			fmt.Fprintln(c.stderr, "New conversation.")
			continue
		case cmd == "/help":
			fmt.Fprintln(c.stderr, "/new  start a new conversation\n/quit end the chat")
			continue
		case strings.HasPrefix(cmd, "/"):
			fmt.Fprintf(c.stderr, "Unknown command %s (try /help).\n", cmd)
			continue
		}
		r, err := c.turn(line, flushWriter{bw})
		fmt.Fprintln(bw)
		bw.Flush()
		if r.answer != 0 {
			c.printStats(r)
		}
		if errors.Is(err, context.Canceled) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// flushWriter flushes after every write so tokens appear as they come.
type flushWriter struct{ w *bufio.Writer }

func (f flushWriter) Write(p []byte) (int, error) {
	n, err := f.w.Write(p)
	if err != nil {
		return n, err
	}
	return n, f.w.Flush()
}

// openSession opens the chat database and a session manager over it for
// the model flags: threads, KV type, devices, the cap on answers at once
// (0: from memory) and, with snapshots, the KV cache folder, so that a
// conversation continued by a later run starts from the snapshot this
// run leaves (without a usable folder it still works, only slower).
func openSession(ctx context.Context, mf *modelFlags, kv engine.KVType, stderr io.Writer, snapshots bool, maxAnswers int) (*store.Store, *session.Manager, error) {
	var lo engine.LoadOptions
	if err := mf.dev.apply(&lo); err != nil {
		return nil, nil, err
	}
	st, err := store.OpenDefault(ctx)
	if err != nil {
		return nil, nil, err
	}
	opt := session.Options{Threads: mf.threads, InMemory: mf.inMemory, KVType: kv, Device: lo.Device, GPULayers: lo.GPULayers, MaxAnswers: maxAnswers,
		Remote: remote.Open(remote.DefaultPath(), remote.SystemKeyring())}
	if snapshots {
		if disk, err := session.OpenDiskCache(0); err != nil {
			fmt.Fprintf(stderr, "churon: %v (continuing without KV snapshots)\n", err)
		} else {
			opt.Disk = disk
		}
	}
	return st, session.New(st, opt), nil
}
