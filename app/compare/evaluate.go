package compare

import (
	"context"
	"fmt"
	"unicode/utf8"

	api "github.com/churon/churon/app/api/compare"
	"github.com/churon/churon/engine"
	"github.com/churon/churon/engine/tokenizer"
)

// tokenText is how a token reads in a list of disagreements: its text,
// or its vocabulary entry (such as "<0xEC>" or "<|im_end|>") when its
// bytes are not text on their own.
func tokenText(tok *tokenizer.Tokenizer, id int32) string {
	b := tok.Piece(id, true)
	if len(b) > 0 && utf8.Valid(b) {
		return string(b)
	}
	return tok.Token(id)
}

// segment is a run of positions to teacher-force: feeding feed[j] yields
// the logits that score targets[j]. reset puts the sequence where feed
// continues from.
type segment struct {
	name    string
	feed    []int32
	targets []int32
	reset   func(*engine.Sequence) error
}

// segments lists what every model is scored on: the reference's answer
// after the prompt (the sequence already holds the prompt, so it is cut
// back to before the prompt's last token and fed from there) and the
// built-in texts from their start.
func (c *runner) segments() []segment {
	ans := c.res.Models[c.ref].Tokens
	var segs []segment
	if p := len(c.prompt); len(ans) > 0 && p > 0 {
		feed := append([]int32{c.prompt[p-1]}, ans[:len(ans)-1]...)
		segs = append(segs, segment{name: "answer", feed: feed, targets: ans,
			reset: func(s *engine.Sequence) error { return s.Truncate(p - 1) }})
	} else {
		segs = append(segs, segment{name: "answer", reset: func(*engine.Sequence) error { return nil }})
	}
	for _, t := range c.texts {
		segs = append(segs, segment{name: t.Name, feed: t.Tokens[:len(t.Tokens)-1], targets: t.Tokens[1:],
			reset: func(s *engine.Sequence) error { return s.Truncate(0) }})
	}
	return segs
}

// score teacher-forces model i over the segments and measures it against
// the reference. For the reference itself it also keeps the rows (in the
// spill file) and their normalisers for the models that follow.
func (c *runner) score(ctx context.Context, i int, m *engine.Model, seq *engine.Sequence) (*api.Quality, error) {
	segs := c.segments()
	total := 0
	for _, s := range segs {
		total += len(s.targets)
	}
	isRef := i == c.ref
	if isRef {
		c.refLSE = make([]float64, total)
		c.refTop = make([]int32, total)
	}
	vocab := c.probes[c.ref].VocabSize
	var refRows []float32
	if !isRef {
		refRows = make([]float32, evalChunk*vocab)
	}
	all := make([]position, total)
	base := 0
	for _, s := range segs {
		if len(s.feed) == 0 {
			continue
		}
		if err := s.reset(seq); err != nil {
			return nil, fmt.Errorf("compare: %s: %w", c.opt.Models[i], err)
		}
		for off := 0; off < len(s.feed); off += evalChunk {
			n := min(evalChunk, len(s.feed)-off)
			rows, err := seq.FeedAll(ctx, s.feed[off:off+n])
			if err != nil {
				return nil, fmt.Errorf("compare: %s: teacher forcing %s: %w", c.opt.Models[i], s.name, err)
			}
			row0 := base + off
			var ref []float32
			if isRef {
				if err := c.spill.write(row0, rows); err != nil {
					return nil, err
				}
				ref = rows
				err = forRows(n, func(j int) error {
					lse, top, err := logSoftmaxNorm(rows[j*vocab : (j+1)*vocab])
					c.refLSE[row0+j], c.refTop[row0+j] = lse, top
					return err
				})
				if err != nil {
					return nil, fmt.Errorf("compare: %s: %w", c.opt.Models[i], err)
				}
			} else {
				ref = refRows[:n*vocab]
				if err := c.spill.read(row0, ref); err != nil {
					return nil, err
				}
			}
			err = forRows(n, func(j int) error {
				p, err := score(ref[j*vocab:(j+1)*vocab], c.refLSE[row0+j], c.refTop[row0+j],
					rows[j*vocab:(j+1)*vocab], s.targets[off+j])
				all[row0+j] = p
				return err
			})
			if err != nil {
				return nil, fmt.Errorf("compare: %s: %w", c.opt.Models[i], err)
			}
			c.emit(api.Evaluating{Model: i, Done: row0 + n, Total: total})
		}
		base += len(s.feed)
	}

	q := &api.Quality{Summary: summarize(all), Texts: []api.Segment{}}
	base = 0
	tok := m.Tokenizer()
	for k, s := range segs {
		ps := all[base : base+len(s.targets)]
		base += len(s.targets)
		seg := api.Segment{Name: s.name, Summary: summarize(ps)}
		if k > 0 {
			q.Texts = append(q.Texts, seg)
			continue
		}
		seg.KLD = make([]float64, len(ps))
		seg.Agree = make([]bool, len(ps))
		seg.DeltaP = make([]float64, len(ps))
		for j, p := range ps {
			seg.KLD[j], seg.Agree[j], seg.DeltaP[j] = p.kld, p.topM == p.topR, p.dp
			if p.topM != p.topR {
				seg.Disagreements = append(seg.Disagreements, api.Disagreement{
					Pos: j, RefTop: p.topR, ModelTop: p.topM, KLD: p.kld,
					RefText: tokenText(tok, p.topR), ModelText: tokenText(tok, p.topM),
				})
			}
		}
		q.Answer = seg
	}
	return q, nil
}
