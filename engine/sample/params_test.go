package sample

import (
	"errors"
	"math"
	"testing"
)

func TestValidate(t *testing.T) {
	nan := float32(math.NaN())
	inf := float32(math.Inf(1))
	with := func(f func(*Params)) Params {
		p := DefaultParams()
		f(&p)
		return p
	}
	tests := []struct {
		name string
		p    Params
		ok   bool
	}{
		{"defaults", DefaultParams(), true},
		{"greedy zero temperature", with(func(p *Params) { p.Temperature = 0 }), true},
		{"negative temperature is greedy", with(func(p *Params) { p.Temperature = -1 }), true},
		{"everything off", offParams(1), true},
		{"top-p 1", with(func(p *Params) { p.TopP = 1 }), true},
		{"min-p 1", with(func(p *Params) { p.MinP = 1 }), true},
		{"whole history", with(func(p *Params) { p.PenaltyWindow = -1 }), true},
		{"negative presence", with(func(p *Params) { p.PresencePenalty = -0.5 }), true},
		{"zero value", Params{}, false},
		{"NaN temperature", with(func(p *Params) { p.Temperature = nan }), false},
		{"Inf temperature", with(func(p *Params) { p.Temperature = inf }), false},
		{"negative top-k", with(func(p *Params) { p.TopK = -1 }), false},
		{"top-p 0", with(func(p *Params) { p.TopP = 0 }), false},
		{"top-p above 1", with(func(p *Params) { p.TopP = 1.01 }), false},
		{"top-p NaN", with(func(p *Params) { p.TopP = nan }), false},
		{"min-p negative", with(func(p *Params) { p.MinP = -0.1 }), false},
		{"min-p above 1", with(func(p *Params) { p.MinP = 1.5 }), false},
		{"min-p NaN", with(func(p *Params) { p.MinP = nan }), false},
		{"repeat 0", with(func(p *Params) { p.RepeatPenalty = 0 }), false},
		{"repeat negative", with(func(p *Params) { p.RepeatPenalty = -1.1 }), false},
		{"repeat NaN", with(func(p *Params) { p.RepeatPenalty = nan }), false},
		{"repeat Inf", with(func(p *Params) { p.RepeatPenalty = inf }), false},
		{"presence NaN", with(func(p *Params) { p.PresencePenalty = nan }), false},
		{"frequency Inf", with(func(p *Params) { p.FrequencyPenalty = -inf }), false},
		{"window -2", with(func(p *Params) { p.PenaltyWindow = -2 }), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.p.Validate()
			if tt.ok && err != nil {
				t.Fatalf("Validate() = %v, want nil", err)
			}
			if !tt.ok {
				if !errors.Is(err, ErrInvalidParams) {
					t.Fatalf("Validate() = %v, want an ErrInvalidParams", err)
				}
				if _, nerr := New(tt.p, 10); !errors.Is(nerr, ErrInvalidParams) {
					t.Fatalf("New() error = %v, want an ErrInvalidParams", nerr)
				}
			}
		})
	}
}

func TestNewVocabSize(t *testing.T) {
	for _, n := range []int{0, -1, math.MaxInt32 + 1} {
		if _, err := New(DefaultParams(), n); !errors.Is(err, ErrVocabSize) {
			t.Errorf("New(vocab %d) error = %v, want ErrVocabSize", n, err)
		}
	}
}
