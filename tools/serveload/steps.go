package main

import (
	"sync"
	"time"

	"github.com/churon/churon/app/session"
)

// stepTally sums what the batch's steps did during one level, so that a
// level's wall time splits into the engine's forward passes (decode-only
// steps and steps that feed prompt tokens) and everything else (the
// scheduler, the server, the clients): where the aggregate falls short of
// the batch's rows, this says whether the passes or the rest are to blame.
type stepTally struct {
	mu sync.Mutex
	// Steps is the time in forward passes; Decode the part in steps that
	// fed no prompt token, whose rows DecodeRows counts.
	Steps, Decode time.Duration
	DecodeRows    int
	PromptTokens  int // prompt tokens the steps fed
}

func (t *stepTally) add(si session.StepInfo) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.Steps += si.Took
	t.PromptTokens += si.Prefill
	if si.Prefill == 0 {
		t.Decode += si.Took
		t.DecodeRows += si.Decoding
	}
}

// stepFigures is a level's tally as the report gives it.
type stepFigures struct {
	PassShare    float64 // of the wall time, in forward passes
	DecodeRate   float64 // tokens/s of the decode-only steps
	PromptTokens int
	PromptSecs   float64 // seconds in steps that fed prompt tokens
}

func (t *stepTally) figures(wall time.Duration) stepFigures {
	t.mu.Lock()
	defer t.mu.Unlock()
	f := stepFigures{PromptTokens: t.PromptTokens, PromptSecs: (t.Steps - t.Decode).Seconds()}
	if wall > 0 {
		f.PassShare = t.Steps.Seconds() / wall.Seconds()
	}
	if t.Decode > 0 {
		f.DecodeRate = float64(t.DecodeRows) / t.Decode.Seconds()
	}
	return f
}
