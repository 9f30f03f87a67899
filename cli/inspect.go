package cli

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/churon/churon/engine"
	"github.com/churon/churon/engine/gguf"
	"github.com/churon/churon/engine/tokenizer"
	"github.com/churon/churon/internal/units"
)

func init() {
	register("tokenize", "show the token ids of a text", runTokenize)
	register("logits", "print the logits after a prompt (for conformance checks)", runLogits)
	register("info", "describe a model file", runInfo)
}

func runTokenize(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("tokenize", stderr)
	model := fs.String("m", "", "model or vocabulary `file` (GGUF)")
	noBOS := fs.Bool("no-bos", false, "do not add BOS/EOS as the model's metadata asks")
	special := fs.Bool("parse-special", false, "turn special-token text such as <|im_start|> into its token")
	prompt := fs.String("p", "", "text to tokenize (or give it as an argument)")
	asJSON := fs.Bool("json", false, "print a JSON array of ids")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	text := textOrArgs(*prompt, pos)
	if *model == "" {
		return usagef("a model is required: -m FILE.gguf")
	}
	tok, closeFn, err := openTokenizer(*model)
	if err != nil {
		return err
	}
	defer closeFn()
	ids := tok.Encode(text, tokenizer.EncodeOptions{AddSpecial: !*noBOS, ParseSpecial: *special})
	if *asJSON {
		if ids == nil {
			ids = []int32{}
		}
		return json.NewEncoder(stdout).Encode(ids)
	}
	for _, id := range ids {
		// The token's text as stored (BPE vocabularies keep bytes as
		// printable stand-ins) and the bytes it decodes to.
		fmt.Fprintf(stdout, "%6d  %-20q %q\n", id, tok.Token(id), tok.Piece(id, true))
	}
	return nil
}

func runLogits(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("logits", stderr)
	var mf modelFlags
	var pf promptFlags
	mf.register(fs)
	pf.register(fs)
	tokens := fs.String("tokens", "", "comma-separated token `ids` to feed (instead of -p)")
	all := fs.Bool("all", false, "every position's logits, not just the last")
	out := fs.String("out", "", "write raw little-endian float32 logits to `file` instead of printing")
	asJSON := fs.Bool("json", false, "print the logits as a JSON array (an array of arrays with --all)")
	if _, err := parse(fs, args); err != nil {
		return err
	}
	if (*tokens == "") == (len(pf.prompts) != 1) {
		return usagef("give either --tokens or one -p")
	}
	m, err := mf.load(ctx)
	if err != nil {
		return err
	}
	defer m.Close()
	var ids []int32
	switch {
	case *tokens != "":
		for _, f := range strings.Split(*tokens, ",") {
			v, err := strconv.ParseInt(strings.TrimSpace(f), 10, 32)
			if err != nil {
				return usagef("--tokens: %q is not a token id", f)
			}
			ids = append(ids, int32(v))
		}
	default:
		pf.raw = true // logits are about the exact text given
		ids, _, err = pf.tokens(ctx, m, pf.prompts[0])
		if err != nil {
			return err
		}
	}
	seq, err := mf.sequence(m)
	if err != nil {
		return err
	}
	vocab := m.Info().VocabSize
	var logits []float32
	if *all {
		logits, err = seq.FeedAll(ctx, ids)
	} else {
		err = seq.Feed(ctx, ids)
		logits = seq.Logits()
	}
	if err != nil {
		return err
	}
	if *out != "" {
		buf := make([]byte, 4*len(logits))
		for i, v := range logits {
			binary.LittleEndian.PutUint32(buf[4*i:], math.Float32bits(v))
		}
		return os.WriteFile(*out, buf, 0o644)
	}
	if !*asJSON {
		fmt.Fprintln(stderr, "churon logits: printing JSON (use --json to silence this note, --out FILE for binary)")
	}
	enc := json.NewEncoder(stdout)
	if *all {
		rows := make([][]float32, len(ids))
		for i := range rows {
			rows[i] = logits[i*vocab : (i+1)*vocab]
		}
		return enc.Encode(rows)
	}
	return enc.Encode(logits)
}

func runInfo(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("info", stderr)
	var mf modelFlags
	mf.register(fs)
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if mf.path == "" && len(pos) == 1 {
		mf.path = pos[0]
	}
	m, err := mf.load(ctx)
	if err != nil {
		return err
	}
	defer m.Close()
	in := m.Info()
	if *asJSON {
		return json.NewEncoder(stdout).Encode(in)
	}
	fmt.Fprintf(stdout, "name:          %s\n", in.Name)
	fmt.Fprintf(stdout, "architecture:  %s (%d layers, width %d, %d heads / %d KV heads)\n", in.Architecture, in.Layers, in.Embedding, in.Heads, in.KVHeads)
	fmt.Fprintf(stdout, "parameters:    %s\n", units.ParamsPrecise(in.Parameters))
	if in.Experts > 0 {
		fmt.Fprintf(stdout, "experts:       %d per layer, %d per token\n", in.Experts, in.ExpertsUsed)
	}
	fmt.Fprintf(stdout, "weights:       %s (%s)\n", in.FileType, in.QuantMixString())
	fmt.Fprintf(stdout, "context:       %d tokens (trained)\n", in.ContextLength)
	if kv, err := kvType(mf.kv); err == nil {
		if cs, err := m.CacheSize(engine.SequenceOptions{Context: mf.ctxLen, KVType: kv}); err == nil {
			fmt.Fprintf(stdout, "kv cache:      %s, per conversation\n", cs.String(in.Layers))
		}
	}
	fmt.Fprintf(stdout, "vocabulary:    %d tokens\n", in.VocabSize)
	fmt.Fprintf(stdout, "chat template: %s\n", templateName(m))
	fmt.Fprintf(stdout, "file:          %s (%s)\n", in.Path, units.Bytes(in.FileBytes))
	fmt.Fprintf(stdout, "backend:       %s\n", in.Backend)
	for _, n := range in.DeviceNotes {
		fmt.Fprintf(stdout, "device note:   %s\n", n)
	}
	return nil
}

// templateName is the chat template's format, or "none" and what chat
// uses instead.
func templateName(m *engine.Model) string {
	switch {
	case !m.Info().HasTemplate:
		return "none (chat uses a generic ChatML format)"
	case m.TemplateError() != nil:
		return fmt.Sprintf("unusable (%v); chat uses a generic ChatML format", m.TemplateError())
	}
	return m.Template().Name()
}

// openTokenizer reads only the vocabulary, so vocab-only GGUF files work.
func openTokenizer(path string) (*tokenizer.Tokenizer, func(), error) {
	f, err := gguf.Open(path)
	if err != nil {
		return nil, nil, err
	}
	tok, err := tokenizer.FromGGUF(f)
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return tok, func() { f.Close() }, nil
}
