package compare

import (
	"context"

	"github.com/churon/churon/app/api/openai"
)

// Comparing across engines (app/compare's RunCross): local GGUF files
// beside models served elsewhere (remote:CONN/MODEL), with quality
// estimated from the alternatives the remote reference reports.

// CrossService is what a front end asks of a comparison across engines.
// app/compare's Runner runs it in this process.
type CrossService interface {
	// Cross runs the comparison and returns when it is done (or ctx is
	// cancelled).
	Cross(ctx context.Context, opt CrossOptions) (*CrossResult, error)
}

// CrossOptions are a cross-engine comparison's.
type CrossOptions struct {
	// Models are 2 to 4 paths: GGUF files and remote:CONN/MODEL.
	Models []string
	// Remotes resolve the remote models' connections (app/remote's
	// Connections).
	Remotes RemoteClients
	// Ref is the reference, one of Models (default: the first remote).
	Ref            string
	Prompt, System string
	// MaxTokens bounds every answer (0: 128); TopK is the alternatives
	// asked of the reference (0: 5; OpenAI allows up to 20).
	MaxTokens, TopK int
	Threads         int
}

// RemoteClients makes the client of a connection by its name.
type RemoteClients interface {
	Client(conn string) (*openai.Client, error)
}

// CrossColumn is one model's column.
type CrossColumn struct {
	Model  string `json:"model"`
	Remote bool   `json:"remote"`
	Text   string `json:"text"`
	// Speed as measured here (a remote's includes the network; its
	// server's own figure when it gives one).
	TTFTMs       float64 `json:"ttft_ms"`
	GenTPS       float64 `json:"gen_tps"`
	PromptTokens int     `json:"prompt_tokens"`
	GenTokens    int     `json:"gen_tokens"`
	// KLD and Top1 are against the reference, estimated from TopK
	// alternatives at Positions places; nil with Note saying why not.
	KLD       *float64 `json:"kld_estimate,omitempty"`
	Top1      *float64 `json:"top1_agreement,omitempty"`
	Positions int      `json:"positions,omitempty"`
	Note      string   `json:"note,omitempty"`
	Error     string   `json:"error,omitempty"`
}

// CrossResult is a cross-engine comparison.
type CrossResult struct {
	Prompt    string        `json:"prompt"`
	Reference int           `json:"reference"`
	TopK      int           `json:"top_k"`
	Columns   []CrossColumn `json:"columns"`
	// Label says what the quality figures are.
	Label string `json:"label"`
}
