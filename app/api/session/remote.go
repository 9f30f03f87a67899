package session

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
)

// Remote models: a model served by another machine (llama-server, vLLM,
// Ollama, LM Studio, another Churon) or a cloud endpoint, reached through
// a connection the person added (app/remote). LoadModel takes its
// RemotePath; its answers stream from the server, rendered by the
// server's own chat template (messages, not tokens), and are stored like
// a local model's, with the connection and model in Message.Model.

// RemotePrefix starts the path of a remote model: "remote:CONN/MODEL".
const RemotePrefix = "remote:"

// RemotePath is the path LoadModel takes for model on connection conn.
func RemotePath(conn, model string) string { return RemotePrefix + conn + "/" + model }

// ParseRemote splits a remote model's path (or a stored answer's Model)
// into its connection and model; ok is false for anything else. A
// connection's name holds no "/", a model's id may.
func ParseRemote(path string) (conn, model string, ok bool) {
	rest, found := strings.CutPrefix(path, RemotePrefix)
	if !found {
		return "", "", false
	}
	conn, model, found = strings.Cut(rest, "/")
	if !found || conn == "" || model == "" {
		return "", "", false
	}
	return conn, model, true
}

// IsRemote reports whether path names a remote model.
func IsRemote(path string) bool {
	_, _, ok := ParseRemote(path)
	return ok
}

// AnyRemote reports whether any of the models is a remote one.
func AnyRemote(models []string) bool {
	for _, m := range models {
		if IsRemote(m) {
			return true
		}
	}
	return false
}

// RemoteEngines finds the engine of a connection by its name
// (app/remote.Connections implements it).
type RemoteEngines interface {
	Engine(conn string) (RemoteEngine, error)
}

// RemoteEngine answers a chat on a model served elsewhere. Stream sends
// msgs (the system prompt first, when there is one) with the sampling of
// set, calls on with every piece of text as it arrives, in order, on the
// calling goroutine, and returns when the answer has ended, ctx is
// cancelled, or it failed. On failure the text already passed to on is
// the answer so far; the error is one line for people (see
// app/api/openai's errors).
type RemoteEngine interface {
	Stream(ctx context.Context, model string, msgs []RequestMessage, set Settings, on func(RemoteDelta)) (RemoteResult, error)
}

// RemoteDelta is new text of a remote answer, Reasoning: of its
// reasoning (which the server keeps apart).
type RemoteDelta struct {
	Text      string
	Reasoning bool
}

// RemoteResult is what the server said the answer cost and why it ended
// ("stop", "length", …; "" when it did not say). Tokens are the server's
// counts (its usage), 0 when it gave none.
type RemoteResult struct {
	PromptTokens, CompletionTokens, CachedTokens int
	Finish                                       string
	// PromptTPS, GenTPS are the server's own speeds, when it reports
	// them (llama-server's timings); 0: the client measures.
	PromptTPS, GenTPS float64
}

// ErrNoRemotes: a remote model was asked for where no connections are
// configured (Options.Remote is nil).
var ErrNoRemotes = errors.New("session: remote models are not available here")

// remoteErrorKey is where a remote answer that failed keeps its error
// line, in its stored Sampler JSON, so that the chat and exports can say
// why it stopped.
const remoteErrorKey = "remote_error"

// RemoteError is the error line stored with a remote answer that failed
// part-way ("" for any other message).
func RemoteError(m Message) string {
	if !IsRemote(m.Model) || m.Sampler == "" {
		return ""
	}
	var v map[string]json.RawMessage
	if json.Unmarshal([]byte(m.Sampler), &v) != nil {
		return ""
	}
	var s string
	if json.Unmarshal(v[remoteErrorKey], &s) != nil {
		return ""
	}
	return s
}

// WithRemoteError returns sampler (a stored answer's Sampler JSON) with
// line recorded as its remote error.
func WithRemoteError(sampler, line string) string {
	v := map[string]json.RawMessage{}
	if sampler != "" && json.Unmarshal([]byte(sampler), &v) != nil {
		return sampler
	}
	b, _ := json.Marshal(line)
	v[remoteErrorKey] = b
	out, err := json.Marshal(v)
	if err != nil {
		return sampler
	}
	return string(out)
}
