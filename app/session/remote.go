package session

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	api "github.com/churon/churon/app/api/session"
	"github.com/churon/churon/app/store"
	"github.com/churon/churon/engine/chat"
)

// remoteCap is how many answers run at once on a remote model: the
// server has its own queue, and a few in flight keep it busy without
// flooding it.
const remoteCap = 4

// remoteModel is a loaded remote model: its connection's engine and the
// model's id there.
type remoteModel struct {
	path, conn, model string
	engine            api.RemoteEngine
	info              api.ModelInfo
}

// startRemote "loads" a remote model: it finds the connection's engine
// (reading its settings and key, off the scheduler) and reports the
// model as loaded; nothing is sent to the server until an answer is asked.
func (m *Manager) startRemote(path string) {
	ctx, cancel := context.WithCancel(context.Background())
	l := &loadJob{path: path, ctx: ctx, cancel: cancel}
	m.s.loading = l
	m.emit(api.ModelLoading{Path: path, Progress: 0})
	go func() {
		conn, model, _ := api.ParseRemote(path)
		r := &remoteModel{path: path, conn: conn, model: model}
		var err error
		r.engine, err = m.opt.Remote.Engine(conn)
		if err != nil {
			err = fmt.Errorf("remote %q: %w", conn, err)
		}
		backend := "remote: " + conn
		if d, ok := r.engine.(interface{ Describe() string }); ok && err == nil {
			backend = d.Describe()
		}
		r.info = api.ModelInfo{Path: path, Name: model, Architecture: "remote", HasTemplate: true, Remote: conn,
			Backend: backend, DeviceNotes: []string{"runs on a remote server: KV snapshots, memory and bandwidth figures apply to local models only"}}
		m.loadDone <- loadResult{job: l, remote: r, err: err}
	}()
}

// remoteMessages is the conversation as the server gets it: the system
// prompt, then the person's and the model's turns (notices are the
// chat's, never the model's; a failed or empty answer is left out).
func remoteMessages(set api.Settings, hist []api.Message) []api.RequestMessage {
	var msgs []api.RequestMessage
	if s := strings.TrimSpace(set.SystemPrompt); s != "" {
		msgs = append(msgs, api.RequestMessage{Role: "system", Content: set.SystemPrompt})
	}
	for _, h := range hist {
		switch h.Role {
		case store.RoleUser:
			msgs = append(msgs, api.RequestMessage{Role: "user", Content: h.Content})
		case store.RoleAssistant:
			if h.Content != "" {
				msgs = append(msgs, api.RequestMessage{Role: "assistant", Content: h.Content})
			}
		}
	}
	return msgs
}

// generateRemote streams one conversation's answer from a remote model
// and saves it as generate does a local one's: created empty, saved every
// CommitEvery, saved with its statistics and finish reason at the end.
// When the server fails part-way, what arrived is kept, the answer ends
// with ReasonError and the error line is stored with it (RemoteError).
func (m *Manager) generateRemote(j *job, r *remoteModel) {
	start := time.Now()
	res := jobResult{job: j}
	defer func() { m.jobDone <- res }()
	bg := context.Background()
	conv, set := j.conv, j.settings
	hist, parent, err := m.history(j)
	if err != nil {
		res.fail(err)
		return
	}
	if j.ctx.Err() != nil {
		res.fail(nil)
		return
	}
	ans, err := m.st.AddMessage(bg, store.Message{
		ConversationID: conv, Role: store.RoleAssistant, ParentID: parent,
		Model: r.path, Quant: "remote: " + r.conn, Sampler: encodeSettings(set),
	})
	m.endCut(j)
	if err != nil {
		res.fail(fmt.Errorf("session: save answer: %w", err))
		return
	}
	m.emit(api.MessageAdded{Message: ans})
	m.startLive(conv, ans.ID)
	stopSaving := m.saveEvery(conv, ans.ID)

	out := answerParts{m: m, conv: conv, msg: ans.ID}
	var first time.Time
	pieces := 0
	result, err := r.engine.Stream(j.ctx, r.model, remoteMessages(set, hist), set, func(d api.RemoteDelta) {
		if d.Text == "" {
			return
		}
		now := time.Now()
		if first.IsZero() {
			first = now
		}
		pieces++
		kind := chat.PartContent
		if d.Reasoning {
			kind = chat.PartReasoning
		}
		if out.add([]chat.Part{{Kind: kind, Text: d.Text}}, pieces, now.Sub(start)) {
			out.reasTokens, out.reasTime = out.reasTokens+1, now.Sub(start)
		}
	})
	stopSaving()

	reason := api.ReasonEOS
	switch {
	case j.ctx.Err() != nil:
		reason, err = api.ReasonCancelled, nil
	case err != nil:
		reason = api.ReasonError
	case result.Finish == "length":
		reason = api.ReasonLength
	}
	final := store.Message{ID: ans.ID, Model: ans.Model, Quant: ans.Quant, Sampler: ans.Sampler, FinishReason: string(reason)}
	final.Content, final.Reasoning = m.liveText(ans.ID)
	if err != nil {
		final.Sampler = api.WithRemoteError(final.Sampler, err.Error())
	}
	gen := result.CompletionTokens
	if gen == 0 {
		gen = pieces // the server gave no usage: a chunk is about a token
	}
	// Speed: the server's own figure when it gives one; else from the
	// first text to the stream's end, unless the text came bunched (a
	// fast server, or the client reading late, delivers many tokens in
	// one read): then over the whole request, an underestimate rather
	// than an absurd figure.
	end := time.Now()
	var ttft time.Duration
	tps := result.GenTPS
	if !first.IsZero() {
		ttft = first.Sub(start)
		if d, whole := end.Sub(first), end.Sub(start); tps == 0 && gen > 1 && whole > 0 {
			if d < whole/10 {
				d = whole
			}
			tps = float64(gen-1) / d.Seconds()
		}
	}
	final.PromptTokens, final.PromptReused, final.GenTokens = result.PromptTokens, result.CachedTokens, gen
	final.TTFT, final.GenTPS, final.PromptTPS = ttft, tps, result.PromptTPS
	final.ReasoningTokens, final.ReasoningTime = out.reasTokens, out.reasTime
	if err := m.st.FinishMessage(bg, final); err != nil {
		m.emit(api.Error{Conv: conv, Op: "save answer", Err: err})
	}
	m.answerSaved(conv, ans.ID, r.path)
	res.events = append(res.events, api.Stats{
		Conv: conv, Msg: ans.ID, PromptTokens: result.PromptTokens, Reused: result.CachedTokens,
		Processed: result.PromptTokens - result.CachedTokens, GenTokens: gen, TTFT: ttft, GenTPS: tps, PromptTPS: result.PromptTPS,
		ReasoningTokens: out.reasTokens, ReasoningTime: out.reasTime,
	})
	m.answerDone(&res, final, reason, err)
}

// errRemoteAPI: the API server answers with local models only.
var errRemoteAPI = errors.New("session: the loaded model is a remote one; the API server answers with local models only")
