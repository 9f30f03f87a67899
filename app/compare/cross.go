package compare

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	api "github.com/churon/churon/app/api/compare"
	"github.com/churon/churon/app/api/openai"
	"github.com/churon/churon/app/api/session"
	"github.com/churon/churon/engine"
	"github.com/churon/churon/engine/chat"
	"github.com/churon/churon/engine/sample"
)

// Comparing across engines: local GGUF files beside models served
// elsewhere (remote:CONN/MODEL). A remote model's full distribution never
// leaves its server, so quality is estimated from the k most likely
// tokens the server reports at each place of its answer (logprobs,
// top_logprobs): the remote model is the reference; each local model is
// teacher-forced on the reference's answer and, at each place where the
// two tokenizations meet, scored against those k alternatives with the
// rest of the probability lumped into one "other" bucket:
//
//	KLD ≈ Σ_k p_k·log(p_k/q_k) + p_rest·log(p_rest/q_rest)
//
// which is exact when k covers the distribution and an underestimate of
// the full KL divergence otherwise; top-1 agreement is exact. Without
// logprobs from the server, the reason is given instead of figures.

// refAnswer is the reference's answer: its text and, per token, its bytes
// and the k alternatives.
type refAnswer struct {
	text   string
	tokens []openai.TokenLogprob
}

// RunCross runs a cross-engine comparison: every model answers the
// prompt greedily (speed and text), then each local model is scored
// against the remote reference where it gave logprobs.
func RunCross(ctx context.Context, opt api.CrossOptions) (*api.CrossResult, error) {
	if n := len(opt.Models); n < 2 || n > 4 {
		return nil, fmt.Errorf("%w (got %d)", api.ErrModelCount, n)
	}
	if strings.TrimSpace(opt.Prompt) == "" {
		return nil, api.ErrEmptyPrompt
	}
	if opt.MaxTokens <= 0 {
		opt.MaxTokens = 128
	}
	if opt.TopK <= 0 {
		opt.TopK = 5
	}
	ref := -1
	for i, m := range opt.Models {
		if (opt.Ref != "" && m == opt.Ref) || (opt.Ref == "" && ref < 0 && session.IsRemote(m)) {
			ref = i
		}
	}
	if ref < 0 {
		return nil, fmt.Errorf("%w: %s", api.ErrReference, opt.Ref)
	}
	if !session.IsRemote(opt.Models[ref]) {
		return nil, fmt.Errorf("%w: with remote models the reference is a remote one (its logprobs), not %s", api.ErrReference, opt.Models[ref])
	}
	res := &api.CrossResult{Prompt: opt.Prompt, Reference: ref, TopK: opt.TopK, Columns: make([]api.CrossColumn, len(opt.Models)),
		Label: fmt.Sprintf("KLD and top-1 agreement against %s, estimated from the %d most likely tokens it reported at each place", opt.Models[ref], opt.TopK)}
	msgs := []session.RequestMessage{{Role: "user", Content: opt.Prompt}}
	if opt.System != "" {
		msgs = append([]session.RequestMessage{{Role: "system", Content: opt.System}}, msgs...)
	}
	var refAns *refAnswer
	order := []int{ref}
	for i := range opt.Models {
		if i != ref {
			order = append(order, i)
		}
	}
	for _, i := range order {
		path := opt.Models[i]
		col := &res.Columns[i]
		col.Model, col.Remote = path, session.IsRemote(path)
		if col.Remote {
			ans, err := runRemote(ctx, opt, path, msgs, i == ref, col)
			if err != nil {
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				col.Error = err.Error()
			}
			if i == ref {
				refAns = ans
				switch {
				case err != nil:
					col.Note = "the reference failed: no quality figures"
				case ans == nil || len(ans.tokens) == 0:
					col.Note = "the server sent no logprobs: quality against it is not shown"
				default:
					col.Note = "reference"
				}
			} else {
				col.Note = "a remote model is not scored against another (the API cannot score a given text)"
			}
			continue
		}
		if err := runLocal(ctx, opt, path, msgs, refAns, col); err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			col.Error = err.Error()
		}
	}
	return res, nil
}

// runRemote streams the model's greedy answer, with top logprobs when it
// is the reference.
func runRemote(ctx context.Context, opt api.CrossOptions, path string, msgs []session.RequestMessage, isRef bool, col *api.CrossColumn) (*refAnswer, error) {
	conn, model, _ := session.ParseRemote(path)
	if opt.Remotes == nil {
		return nil, session.ErrNoRemotes
	}
	cl, err := opt.Remotes.Client(conn)
	if err != nil {
		return nil, err
	}
	// Greedy, as the local models answer.
	zero, seed, maxTokens := 0.0, int64(0), opt.MaxTokens
	req := openai.ChatRequest{Model: model, Sampling: openai.Sampling{Temperature: &zero, Seed: &seed}, MaxTokens: &maxTokens}
	for _, m := range msgs {
		req.Messages = append(req.Messages, openai.Message{Role: m.Role, Content: m.Content})
	}
	if isRef {
		req.Logprobs, req.TopLogprobs = true, &opt.TopK
	}
	start := time.Now()
	st, err := cl.ChatStream(ctx, req)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	ans := &refAnswer{}
	var b strings.Builder
	var first time.Time
	chunks := 0
	for {
		ch, err := st.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			col.Text = b.String()
			return nil, err
		}
		if t := ch.Text(); t != "" {
			if first.IsZero() {
				first = time.Now()
			}
			b.WriteString(t)
			chunks++
		}
		ans.tokens = append(ans.tokens, ch.TokenLogprobs()...)
	}
	end := time.Now()
	ans.text, col.Text = b.String(), b.String()
	col.GenTokens = chunks
	if u := st.Usage(); u != nil {
		col.PromptTokens, col.GenTokens = u.PromptTokens, u.CompletionTokens
	}
	if !first.IsZero() {
		col.TTFTMs = ms(first.Sub(start))
		if d := end.Sub(start); col.GenTokens > 1 && d > 0 {
			col.GenTPS = float64(col.GenTokens) / d.Seconds()
		}
	}
	if tm := st.Timings(); tm != nil && tm.PredictedPerSecond > 0 {
		col.GenTPS = tm.PredictedPerSecond
	}
	return ans, nil
}

// runLocal loads a GGUF file, answers greedily (speed, text) and, with
// a reference, teacher-forces the reference's answer and scores it.
func runLocal(ctx context.Context, opt api.CrossOptions, path string, msgs []session.RequestMessage, ref *refAnswer, col *api.CrossColumn) error {
	m, err := loadModel(ctx, path, engine.LoadOptions{Threads: opt.Threads})
	if err != nil {
		return err
	}
	defer m.Close()
	cm := make([]chat.Message, len(msgs))
	for i, x := range msgs {
		cm[i] = chat.Message{Role: x.Role, Content: x.Content}
	}
	prompt, _, err := m.ChatTokensWith(ctx, cm, nil)
	if err != nil {
		return fmt.Errorf("compare: %s: render the prompt: %w", path, err)
	}
	ctxLen := len(prompt) + opt.MaxTokens + 8
	if ref != nil {
		ctxLen = max(ctxLen, len(prompt)+4*len(ref.text)+8)
	}
	seq, err := m.NewSequence(engine.SequenceOptions{Context: ctxLen})
	if err != nil {
		return err
	}
	defer seq.Close()
	r, err := seq.Generate(ctx, prompt, engine.GenerateOptions{MaxTokens: opt.MaxTokens, Sampling: sample.Greedy()}, nil)
	if err != nil {
		return err
	}
	col.Text, col.PromptTokens, col.GenTokens = r.Text, r.PromptTokens, len(r.Tokens)
	col.TTFTMs, col.GenTPS = ms(r.TTFT), r.GenTPS
	if ref == nil || len(ref.tokens) == 0 {
		col.Note = "no quality figures: the reference gave no logprobs"
		return nil
	}
	kld, top1, n, err := scoreAgainstTopK(ctx, m, seq, prompt, ref)
	if err != nil {
		return err
	}
	if n == 0 {
		col.Note = "no place where the two tokenizations meet: the models' vocabularies differ"
		return nil
	}
	col.KLD, col.Top1, col.Positions = &kld, &top1, n
	col.Note = fmt.Sprintf("estimated from %d alternatives", len(ref.tokens[0].TopLogprobs))
	return nil
}

// scoreAgainstTopK feeds the reference's answer after the prompt and
// compares, place by place, the local distribution with the reference's
// alternatives (the top-k estimate of the package comment). It returns
// the mean KLD estimate, the top-1 agreement and the places compared.
//
// Tokens are matched by their bytes; where several local tokens spell the
// same bytes, their probabilities add up (the probability of writing
// those bytes), and the answer is fed with the one the local model likes
// best. When every reference token is spelled by a local one (a local
// quantization of the served model), the model is fed the reference's
// tokens one place at a time; otherwise the answer's text is tokenized
// here, and places are compared where a reference token starts where a
// local one does.
func scoreAgainstTopK(ctx context.Context, m *engine.Model, seq *engine.Sequence, prompt []int32, ref *refAnswer) (kld, top1 float64, n int, err error) {
	tok := m.Tokenizer()
	vocab := tok.VocabSize()
	byPiece := make(map[string][]int32, vocab)
	for id := int32(0); int(id) < vocab; id++ {
		if p := string(tok.Piece(id, false)); p != "" {
			byPiece[p] = append(byPiece[p], id)
		}
	}
	same := len(ref.tokens) > 0
	for _, rt := range ref.tokens {
		if len(byPiece[string(tokenBytes(rt))]) == 0 {
			same = false
			break
		}
	}
	if err := seq.Truncate(len(prompt) - 1); err != nil {
		return 0, 0, 0, err
	}
	var sumKLD float64
	agree := 0
	place := func(row []float32, rt openai.TokenLogprob) error {
		if len(rt.TopLogprobs) == 0 {
			return nil
		}
		lse, top, err := logSoftmaxNorm(row)
		if err != nil {
			return err
		}
		var pIn, qIn, k float64
		seen := map[string]bool{}
		for _, alt := range rt.TopLogprobs {
			b := string(altBytes(alt))
			ids := byPiece[b]
			if len(ids) == 0 || seen[b] {
				continue // not written by any token here: it stays in "other"
			}
			seen[b] = true
			var q float64
			for _, id := range ids {
				q += math.Exp(float64(row[id]) - lse)
			}
			p := math.Exp(alt.Logprob)
			k += p * (alt.Logprob - math.Log(math.Max(q, 1e-300)))
			pIn += p
			qIn += q
		}
		if pRest, qRest := 1-pIn, 1-qIn; pRest > 1e-9 {
			k += pRest * math.Log(pRest/math.Max(qRest, 1e-12))
		}
		sumKLD += math.Max(k, 0)
		if string(tok.Piece(top, false)) == string(altBytes(rt.TopLogprobs[0])) {
			agree++
		}
		n++
		return nil
	}
	if same {
		next := prompt[len(prompt)-1]
		for _, rt := range ref.tokens {
			row, err := seq.FeedAll(ctx, []int32{next})
			if err != nil {
				return 0, 0, 0, fmt.Errorf("compare: teacher forcing the reference's answer: %w", err)
			}
			if err := place(row, rt); err != nil {
				return 0, 0, 0, err
			}
			ids := byPiece[string(tokenBytes(rt))]
			next = ids[0]
			for _, id := range ids[1:] {
				if row[id] > row[next] {
					next = id
				}
			}
		}
	} else {
		ans := m.TokenizePrompt(ref.text, false, false)
		if len(ans) == 0 {
			return 0, 0, 0, nil
		}
		// A SentencePiece tokenizer adds a space before the text: offsets
		// count from where the reference's text begins.
		var local strings.Builder
		for _, id := range ans {
			local.Write(tok.Piece(id, false))
		}
		shift := 0
		if lt := local.String(); len(lt) > len(ref.text) && strings.HasSuffix(lt, ref.text) {
			shift = len(lt) - len(ref.text)
		}
		starts := map[int]int{} // byte offset in the reference's text → index in ans
		off := -shift
		for j, id := range ans {
			starts[off] = j
			off += len(tok.Piece(id, false))
		}
		feed := append([]int32{prompt[len(prompt)-1]}, ans[:len(ans)-1]...)
		rows := make([]float32, 0, len(feed)*vocab)
		for o := 0; o < len(feed); o += evalChunk {
			r, err := seq.FeedAll(ctx, feed[o:min(o+evalChunk, len(feed))])
			if err != nil {
				return 0, 0, 0, fmt.Errorf("compare: teacher forcing the reference's answer: %w", err)
			}
			rows = append(rows, r...)
		}
		if len(rows)/vocab < len(feed) {
			return 0, 0, 0, fmt.Errorf("compare: %d rows of logits for %d tokens", len(rows)/vocab, len(feed))
		}
		off = 0
		for _, rt := range ref.tokens {
			j, ok := starts[off]
			off += len(tokenBytes(rt))
			if !ok {
				continue
			}
			if err := place(rows[j*vocab:(j+1)*vocab], rt); err != nil {
				return 0, 0, 0, err
			}
		}
	}
	if n == 0 {
		return 0, 0, 0, nil
	}
	return sumKLD / float64(n), float64(agree) / float64(n), n, nil
}

func tokenBytes(t openai.TokenLogprob) []byte {
	if len(t.Bytes) > 0 {
		return intsToBytes(t.Bytes)
	}
	return []byte(t.Token)
}

func altBytes(t openai.TopLogprob) []byte {
	if len(t.Bytes) > 0 {
		return intsToBytes(t.Bytes)
	}
	return []byte(t.Token)
}

func intsToBytes(v []int) []byte {
	b := make([]byte, len(v))
	for i, x := range v {
		b[i] = byte(x)
	}
	return b
}
