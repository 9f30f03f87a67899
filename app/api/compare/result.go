package compare

import (
	"crypto/rand"
	"encoding/binary"
	"time"
)

// FormatVersion is the version of Result's JSON shape, stored in Format.
// It changes only when a field changes meaning; new fields are added
// without a bump.
const FormatVersion = 1

// Result is a finished comparison. It is plain data: the JSON form
// (encoding/json with these tags) is what `churon compare --json` prints
// and what the store keeps, so it is documented and stable.
type Result struct {
	Format  int    `json:"format"`
	Title   string `json:"title"`
	Created string `json:"created"` // RFC 3339, UTC
	// ID is the store's id once saved (Save, Load); not part of the JSON.
	ID int64 `json:"-"`

	Prompt string `json:"prompt"`
	System string `json:"system,omitempty"`
	// Template is how the prompt was rendered: "chat" (the reference
	// model's chat template) or "raw" (as given: asked for, or the
	// reference has no usable template). Every model got the same tokens.
	Template     string   `json:"template"`
	PromptText   string   `json:"prompt_text"` // the rendered prompt
	PromptTokens []int32  `json:"prompt_tokens"`
	Sampling     Sampling `json:"sampling"`

	Reference   int    `json:"reference"` // index into Models
	Order       []int  `json:"order"`     // the order the models ran in (the reference first)
	VocabSize   int    `json:"vocab_size"`
	VocabSHA256 string `json:"vocab_sha256"`
	// Texts are the built-in texts as evaluated: name and the tokens
	// (capped at Options.TextTokens) every model was scored on.
	Texts []TextTokens `json:"texts"`

	Models []ModelResult `json:"models"` // in the order given

	Threads   int     `json:"threads"`
	KVType    string  `json:"kv_type"`
	RSSSource string  `json:"rss_source"` // RSSStatm or RSSEstimate
	ElapsedMs float64 `json:"elapsed_ms"` // the whole run, checks to last unload
}

// TextTokens is a built-in text as tokenized by the reference.
type TextTokens struct {
	Name   string  `json:"name"`
	Lang   string  `json:"lang"`
	Tokens []int32 `json:"tokens"`
}

// Sampling is the sampler and length settings, in the comparison's own
// JSON shape (the engine's types never become the file format).
type Sampling struct {
	MaxTokens        int      `json:"max_tokens"`
	Temperature      float64  `json:"temperature"`
	TopK             int      `json:"top_k"`
	TopP             float64  `json:"top_p"`
	MinP             float64  `json:"min_p"`
	RepeatPenalty    float64  `json:"repeat_penalty"`
	PresencePenalty  float64  `json:"presence_penalty"`
	FrequencyPenalty float64  `json:"frequency_penalty"`
	PenaltyWindow    int      `json:"repeat_last_n"`
	Seed             uint64   `json:"seed"`
	Stop             []string `json:"stop,omitempty"`
	IgnoreEOS        bool     `json:"ignore_eos,omitempty"`
}

// RandomSeed returns a seed from the system's random source, for callers
// that want different text on each run (the seed used is in the Result,
// so a run can still be repeated).
func RandomSeed() uint64 {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return uint64(time.Now().UnixNano()) >> 1
	}
	return binary.LittleEndian.Uint64(b[:]) >> 1
}

// IsZero reports whether no setting is set (Options.Sampling then means
// DefaultSampling).
func (s Sampling) IsZero() bool {
	return s.Stop == nil && s.MaxTokens == 0 && s.Temperature == 0 && s.TopK == 0 && s.TopP == 0 && s.MinP == 0 &&
		s.RepeatPenalty == 0 && s.PresencePenalty == 0 && s.FrequencyPenalty == 0 && s.PenaltyWindow == 0 &&
		s.Seed == 0 && !s.IgnoreEOS
}

// ModelResult is one model's figures, output and quality.
type ModelResult struct {
	Probe
	Reference bool `json:"reference"`

	// RSSBytes is the resident memory the model took (see Result.RSSSource):
	// by default the growth of the resident set from before loading to
	// after generating.
	RSSBytes int64 `json:"rss_bytes"`
	// RSSEstimated: the resident set did not grow measurably (a small
	// model, heap returned meanwhile), so RSSBytes is the weights' size
	// plus the KV cache, as with RSSEstimate.
	RSSEstimated bool  `json:"rss_estimated,omitempty"`
	KVBytes      int64 `json:"kv_bytes"` // the KV cache's allocation
	// LoadMs is the load from a file already in the page cache: every
	// model's file is read once before its load (app/compare warm).
	LoadMs float64 `json:"load_ms"`
	// TTFTMs is the time to the first token, prompt processing included.
	TTFTMs    float64 `json:"ttft_ms"`
	PromptTPS float64 `json:"prompt_tps"`
	GenTPS    float64 `json:"gen_tps"` // tokens after the first over the time after the first
	// EvalMs is the time the teacher-forced quality pass took.
	EvalMs float64 `json:"eval_ms"`

	Output string  `json:"output"`
	Tokens []int32 `json:"tokens"`
	// Pieces is the text each token completed: Output cut at token
	// boundaries (empty for a token that only starts a character another
	// token finishes, and for an end-of-generation token).
	Pieces []string `json:"pieces"`
	Finish string   `json:"finish_reason"`

	Quality *Quality `json:"quality"`
}

// Quality is a model measured against the reference, teacher-forced over
// the same tokens: the reference's answer and the built-in texts. The
// reference's own Quality is computed the same way (KLD 0, agreement 1,
// ratio 1) and carries its perplexity.
type Quality struct {
	// Summary pools every scored token: the answer and the texts.
	Summary
	Answer Segment   `json:"answer"`
	Texts  []Segment `json:"texts"`
}

// Summary condenses per-token figures over a set of positions.
type Summary struct {
	Tokens  int     `json:"tokens"`   // positions scored
	KLDMean float64 `json:"kld_mean"` // mean KL(reference ‖ model), nats
	// KLDP99 is the 99th percentile of the per-token KLD, interpolated
	// linearly between the closest ranks.
	KLDP99 float64 `json:"kld_p99"`
	KLDMax float64 `json:"kld_max"`
	// Top1Agreement is the fraction of positions where the model's most
	// likely token is the reference's (ties: the lower id, as greedy
	// sampling breaks them).
	Top1Agreement float64 `json:"top1_agreement"`
	// PPL and RefPPL are the model's and the reference's perplexity over
	// the scored tokens; PPLRatio = PPL / RefPPL.
	PPL      float64 `json:"ppl"`
	RefPPL   float64 `json:"ref_ppl"`
	PPLRatio float64 `json:"ppl_ratio"`
	// DeltaPMean is the mean of p_model − p_reference of the scored token.
	DeltaPMean float64 `json:"delta_p_mean"`
}

// Segment is the figures over one run of tokens: "answer" (the
// reference's answer, after the prompt) or a built-in text's name. The
// answer keeps per-token arrays, for the chart and the highlighted text.
type Segment struct {
	Name string `json:"name"`
	Summary
	KLD    []float64 `json:"kld,omitempty"`     // per position
	Agree  []bool    `json:"agree,omitempty"`   // top-1 agrees, per position
	DeltaP []float64 `json:"delta_p,omitempty"` // p_model − p_ref of the scored token
	// Disagreements lists the positions where the top-1 tokens differ.
	Disagreements []Disagreement `json:"disagreements,omitempty"`
}

// Disagreement is an answer position where the model would have said
// something else than the reference.
type Disagreement struct {
	Pos       int     `json:"pos"`       // index into the reference's answer tokens
	RefTop    int32   `json:"ref_top"`   // the reference's most likely token
	ModelTop  int32   `json:"model_top"` // the model's
	RefText   string  `json:"ref_text"`  // their text (invalid UTF-8 shown as U+FFFD)
	ModelText string  `json:"model_text"`
	KLD       float64 `json:"kld"`
}

// AnswerPieces is the reference's answer split into the text each token
// completed (empty for a token whose bytes only finish a character with a
// later one), so a view can mark tokens in the text.
func (r *Result) AnswerPieces() []string {
	if r.Reference < 0 || r.Reference >= len(r.Models) {
		return nil
	}
	return r.Models[r.Reference].Pieces
}

// Options returns options that run the comparison again: the same files,
// reference, prompt, settings and seed (a model file changed since gives
// other figures, of course).
func (r *Result) Options() Options {
	o := Options{Prompt: r.Prompt, System: r.System, Raw: r.Template == "raw", Sampling: r.Sampling,
		KV: r.KVType, Title: r.Title, Threads: r.Threads, TextTokens: -1}
	for _, m := range r.Models {
		o.Models = append(o.Models, m.File)
	}
	if r.Reference >= 0 && r.Reference < len(r.Models) {
		o.Ref = r.Models[r.Reference].File
	}
	for _, t := range r.Texts {
		o.TextTokens = max(o.TextTokens, len(t.Tokens))
	}
	return o
}

// RSS sources reported in Result.RSSSource.
const (
	// RSSStatm: the growth of the process's resident set (/proc/self/statm)
	// from before the model was loaded to after its answer was generated.
	// Mapped weights count once their pages have been touched, so this is
	// the memory the model really occupied while answering: weights read
	// (an untied model's embedding is only paged in for the tokens used),
	// KV cache and scratch.
	RSSStatm = "statm"
	// RSSEstimate: no /proc on this system; the figure is the weights'
	// size plus the KV cache, what the resident set would reach.
	RSSEstimate = "estimate"
)
