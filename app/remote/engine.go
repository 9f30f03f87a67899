package remote

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/churon/churon/app/api/openai"
	"github.com/churon/churon/app/api/session"
)

// Client makes a client of the connection called name, with its key.
func (c *Connections) Client(name string) (*openai.Client, error) {
	r, key, err := c.key(name)
	if err != nil {
		return nil, err
	}
	cfg := openai.Config{BaseURL: r.BaseURL, APIKey: key, FirstByte: c.FirstByte, Stall: c.Stall}
	if r.CACert != "" {
		pem, err := os.ReadFile(r.CACert)
		if err != nil {
			return nil, fmt.Errorf("remote %q: the certificate to trust: %w", name, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("remote %q: %s holds no PEM certificate", name, r.CACert)
		}
		cfg.RootCAs = pool
	}
	return openai.NewClient(cfg)
}

// Engine is the connection's engine, for app/session (it implements
// session.RemoteEngines).
func (c *Connections) Engine(name string) (session.RemoteEngine, error) {
	cl, err := c.Client(name)
	if err != nil {
		return nil, err
	}
	return &Engine{Name: name, Client: cl}, nil
}

var _ session.RemoteEngines = (*Connections)(nil)

// Refresh asks the endpoint what it serves, records it and returns it.
func (c *Connections) Refresh(ctx context.Context, name string) ([]string, error) {
	cl, err := c.Client(name)
	if err != nil {
		return nil, err
	}
	ms, err := cl.Models(ctx)
	if err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(ms))
	for _, m := range ms {
		if m.ID != "" && !slices.Contains(ids, m.ID) {
			ids = append(ids, m.ID)
		}
	}
	if err := c.SetModels(name, ids); err != nil {
		return ids, err
	}
	return ids, nil
}

// Engine answers conversations on a connection's models.
type Engine struct {
	Name   string
	Client *openai.Client
	// Logprobs, TopLogprobs: ask for them (the Compare page's quality
	// figures); OnLogprobs then sees them as they come.
	Logprobs    bool
	TopLogprobs int
	OnLogprobs  func([]openai.TokenLogprob)
}

// Describe says where the engine's model runs, for the status line.
func (e *Engine) Describe() string { return "remote: " + e.Name + " (" + e.Client.BaseURL() + ")" }

// Request is the OpenAI request of a conversation's turn: its messages
// and the sampling of set the API has (temperature, top-p, and the
// extensions llama-server, vLLM and Ollama read: top-k, min-p, repeat
// penalty); a seed of -1 (random) is left to the server.
func Request(model string, msgs []session.RequestMessage, set session.Settings) openai.ChatRequest {
	req := openai.ChatRequest{Model: model}
	for _, m := range msgs {
		req.Messages = append(req.Messages, openai.Message{Role: m.Role, Content: m.Content})
	}
	t, p := float64(set.Temperature), float64(set.TopP)
	req.Temperature = &t
	if set.TopP > 0 && set.TopP < 1 {
		req.TopP = &p
	}
	if set.TopK > 0 {
		k := set.TopK
		req.TopK = &k
	}
	if set.MinP > 0 {
		mp := float64(set.MinP)
		req.MinP = &mp
	}
	if set.RepeatPenalty > 0 && set.RepeatPenalty != 1 {
		rp := float64(set.RepeatPenalty)
		req.RepeatPenalty = &rp
	}
	if set.MaxTokens > 0 {
		n := set.MaxTokens
		req.MaxTokens = &n
	}
	if set.Seed >= 0 {
		s := set.Seed
		req.Seed = &s
	}
	req.Stop = slices.Clone(set.Stop)
	return req
}

// Stream implements session.RemoteEngine: it streams the answer, passing
// text to on as it arrives, and returns the server's usage and finish
// reason. On an error, what on received is the answer so far.
func (e *Engine) Stream(ctx context.Context, model string, msgs []session.RequestMessage, set session.Settings, on func(session.RemoteDelta)) (session.RemoteResult, error) {
	req := Request(model, msgs, set)
	if e.Logprobs {
		req.Logprobs = true
		if e.TopLogprobs > 0 {
			k := e.TopLogprobs
			req.TopLogprobs = &k
		}
	}
	st, err := e.Client.ChatStream(ctx, req)
	if err != nil {
		return session.RemoteResult{}, err
	}
	defer st.Close()
	var res session.RemoteResult
	for {
		ch, err := st.Next()
		if err != nil {
			res.Finish = st.FinishReason()
			if tm := st.Timings(); tm != nil {
				res.PromptTPS, res.GenTPS = tm.PromptPerSecond, tm.PredictedPerSecond
			}
			if u := st.Usage(); u != nil {
				res.PromptTokens, res.CompletionTokens = u.PromptTokens, u.CompletionTokens
				if u.PromptTokensDetails != nil {
					res.CachedTokens = u.PromptTokensDetails.CachedTokens
				}
			}
			if errors.Is(err, io.EOF) {
				return res, nil
			}
			return res, err
		}
		if r := ch.ReasoningText(); r != "" {
			on(session.RemoteDelta{Text: r, Reasoning: true})
		}
		if t := ch.Text(); t != "" {
			on(session.RemoteDelta{Text: t})
		}
		if lp := ch.TokenLogprobs(); lp != nil && e.OnLogprobs != nil {
			e.OnLogprobs(lp)
		}
	}
}

// Report is what Test found.
type Report struct {
	BaseURL string
	// Latency is the time GET /v1/models took.
	Latency time.Duration
	Models  []string
	// Streaming: a one-token streamed answer came back (Model says
	// which model was asked); Logprobs: it carried top logprobs.
	Model     string
	Streaming bool
	Logprobs  bool
	// StreamErr, LogprobsNote say why not.
	StreamErr    error
	LogprobsNote string
}

// Test checks the connection: it lists the models (an error here means
// the endpoint is unusable), then asks the first (or model) for one
// streamed token with top logprobs.
func (c *Connections) Test(ctx context.Context, name, model string) (Report, error) {
	cl, err := c.Client(name)
	if err != nil {
		return Report{}, err
	}
	rep := Report{BaseURL: cl.BaseURL()}
	start := time.Now()
	ms, err := cl.Models(ctx)
	rep.Latency = time.Since(start)
	if err != nil {
		return rep, err
	}
	for _, m := range ms {
		rep.Models = append(rep.Models, m.ID)
	}
	if model == "" && len(rep.Models) > 0 {
		model = rep.Models[0]
	}
	if model == "" {
		return rep, ErrNoModels
	}
	rep.Model = model
	one, k := 1, 2
	st, err := cl.ChatStream(ctx, openai.ChatRequest{Model: model, Messages: []openai.Message{{Role: "user", Content: "Say hi."}},
		MaxTokens: &one, Logprobs: true, TopLogprobs: &k})
	if err != nil {
		rep.StreamErr = err
		return rep, nil
	}
	defer st.Close()
	for {
		ch, err := st.Next()
		if errors.Is(err, io.EOF) {
			rep.Streaming = true
			break
		}
		if err != nil {
			rep.StreamErr = err
			break
		}
		for _, lp := range ch.TokenLogprobs() {
			if len(lp.TopLogprobs) > 0 {
				rep.Logprobs = true
			}
		}
	}
	if !rep.Logprobs {
		rep.LogprobsNote = "the server sent no top_logprobs: quality figures against it are not shown"
	}
	return rep, nil
}
