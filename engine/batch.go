package engine

import (
	"context"
	"fmt"

	"github.com/churon/churon/engine/arch"
)

// DecodeBatch feeds tokens[i] to seqs[i] for every i in one forward pass:
// each weight is read from memory once for all the sequences, which is
// what makes decoding several conversations (or a list of prompts) at
// once nearly as fast per step as decoding one. Afterwards each
// sequence's Logits predicts its next token. The sequences must belong
// to m and be distinct; none may be used by another goroutine during the
// call. The logits equal those of feeding each sequence alone.
func (m *Model) DecodeBatch(ctx context.Context, seqs []*Sequence, tokens []int32) error {
	if len(seqs) == 0 && len(tokens) == 0 {
		return nil
	}
	if err := m.checkBatch(seqs, len(tokens), "tokens"); err != nil {
		return err
	}
	for i, s := range seqs {
		if s.Len() >= s.ctxLen {
			return fmt.Errorf("%w: sequence %d holds %d tokens", ErrContextFull, i, s.Len())
		}
		if err := m.checkTokens(tokens[i : i+1]); err != nil {
			return err
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	for _, s := range seqs {
		if err := s.refill(ctx); err != nil {
			return err
		}
	}
	lead := seqs[0]
	bt := &lead.bt
	bt.Tokens = append(lead.btoks[:0], tokens...)
	bt.Pos = lead.bpos[:0]
	bt.Groups = bt.Groups[:0]
	bt.OutRows = bt.OutRows[:0]
	for i, s := range seqs {
		bt.Pos = append(bt.Pos, int32(s.Len()))
		bt.Groups = append(bt.Groups, arch.Group{Start: i, End: i + 1})
		bt.OutRows = append(bt.OutRows, i)
	}
	lead.btoks, lead.bpos = bt.Tokens, bt.Pos
	if err := m.forwardBatch(lead, seqs, seqs); err != nil {
		return err
	}
	for i, s := range seqs {
		s.tokens = append(s.tokens, tokens[i])
	}
	return nil
}

// FeedBatch appends toks[i] to seqs[i] for every i, running the prompts
// of all the sequences through the model together in forward passes of
// up to the first sequence's batch size (SequenceOptions.Batch) rows.
// Afterwards each sequence's Logits predicts the token after its last.
// Empty entries are allowed. The same rules as DecodeBatch apply.
func (m *Model) FeedBatch(ctx context.Context, seqs []*Sequence, toks [][]int32) error {
	if len(seqs) == 0 && len(toks) == 0 {
		return nil
	}
	if err := m.checkBatch(seqs, len(toks), "token lists"); err != nil {
		return err
	}
	for i, s := range seqs {
		if s.Len()+len(toks[i]) > s.ctxLen {
			return fmt.Errorf("%w: sequence %d: %d cached + %d new tokens > %d", ErrContextFull, i, s.Len(), len(toks[i]), s.ctxLen)
		}
		if err := m.checkTokens(toks[i]); err != nil {
			return err
		}
	}
	for _, s := range seqs {
		if err := s.refill(ctx); err != nil {
			return err
		}
	}
	lead := seqs[0]
	done := make([]int, len(seqs)) // tokens of each sequence fed so far
	took := make([]int, len(seqs)) // tokens each takes in this pass
	var want []*Sequence
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		bt := &lead.bt
		bt.Tokens, bt.Pos = lead.btoks[:0], lead.bpos[:0]
		bt.Groups, bt.OutRows = bt.Groups[:0], bt.OutRows[:0]
		lead.bseqs = lead.bseqs[:0]
		want = want[:0]
		room := lead.batch
		for i, s := range seqs {
			rest := toks[i][done[i]:]
			k := s.chunk(len(rest), room)
			took[i] = k
			if k == 0 {
				continue
			}
			start := len(bt.Tokens)
			bt.Tokens = append(bt.Tokens, rest[:k]...)
			for j := range k {
				bt.Pos = append(bt.Pos, int32(s.Len()+j))
			}
			bt.Groups = append(bt.Groups, arch.Group{Start: start, End: start + k})
			lead.bseqs = append(lead.bseqs, s)
			if k == len(rest) {
				// The prompt ends in this pass: its last row's logits are wanted.
				bt.OutRows = append(bt.OutRows, start+k-1)
				want = append(want, s)
			}
			room -= k
		}
		lead.btoks, lead.bpos = bt.Tokens, bt.Pos
		if len(bt.Tokens) == 0 {
			return nil
		}
		if err := m.forwardBatch(lead, lead.bseqs, want); err != nil {
			return err
		}
		for i, s := range seqs {
			s.tokens = append(s.tokens, toks[i][done[i]:done[i]+took[i]]...)
			done[i] += took[i]
		}
	}
}

// checkBatch rejects a batch call's arguments unless it has one of its n
// per-sequence entries (its what: tokens, prompts) for each sequence, the
// model is open, and the sequences are its own, open and distinct.
func (m *Model) checkBatch(seqs []*Sequence, n int, what string) error {
	if len(seqs) != n {
		return fmt.Errorf("%w: %d sequences, %d %s", ErrBatch, len(seqs), n, what)
	}
	if m.file == nil {
		return ErrClosed
	}
	for i, s := range seqs {
		if s == nil || s.m != m {
			return fmt.Errorf("%w: sequence %d does not belong to this model", ErrBatch, i)
		}
		if s.closed {
			return ErrClosed
		}
		for _, t := range seqs[:i] {
			if t == s {
				return fmt.Errorf("%w: sequence %d appears twice", ErrBatch, i)
			}
		}
	}
	return nil
}

// forwardBatch runs lead.bt, whose group i is groups[i]'s rows, and
// copies logits row j (of OutRows) to want[j].
func (m *Model) forwardBatch(lead *Sequence, groups, want []*Sequence) error {
	vocab := m.info.VocabSize
	n := len(want) * vocab
	if cap(lead.blogits) < n {
		lead.blogits = make([]float32, n)
	}
	lead.blogits = lead.blogits[:n]
	m.exec.Lock()
	err := m.forward(&lead.bt, groups, lead.blogits)
	m.exec.Unlock()
	if err != nil {
		return err
	}
	for j, s := range want {
		copy(s.logits, lead.blogits[j*vocab:(j+1)*vocab])
	}
	return nil
}
