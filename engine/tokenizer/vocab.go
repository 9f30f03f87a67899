package tokenizer

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// TokenType is a token's type as GGUF stores it in tokenizer.ggml.token_type.
type TokenType int32

// Token types, numbered as in GGUF (and llama.cpp's llama_token_type).
const (
	TokenUndefined   TokenType = 0
	TokenNormal      TokenType = 1
	TokenUnknown     TokenType = 2
	TokenControl     TokenType = 3
	TokenUserDefined TokenType = 4
	TokenUnused      TokenType = 5
	TokenByte        TokenType = 6
)

func (t TokenType) String() string {
	switch t {
	case TokenUndefined:
		return "undefined"
	case TokenNormal:
		return "normal"
	case TokenUnknown:
		return "unknown"
	case TokenControl:
		return "control"
	case TokenUserDefined:
		return "user-defined"
	case TokenUnused:
		return "unused"
	case TokenByte:
		return "byte"
	}
	return "tokentype(" + strconv.Itoa(int(t)) + ")"
}

// Vocab is the tokenizer metadata of a model, as GGUF stores it under
// tokenizer.ggml.*. Optional values are pointers: nil means "not in the
// file", and the model type's default applies as in llama.cpp.
type Vocab struct {
	Model string // tokenizer.ggml.model: "llama" (SentencePiece) or "gpt2" (byte-level BPE)
	Pre   string // tokenizer.ggml.pre: the BPE pre-tokenizer ("" means llama.cpp's "default")
	Name  string // general.name: llama.cpp keys a few per-model token rules on it (Phi-3)

	Tokens []string    // tokenizer.ggml.tokens
	Scores []float32   // tokenizer.ggml.scores; nil: all zero
	Types  []TokenType // tokenizer.ggml.token_type; nil: all normal
	Merges []string    // tokenizer.ggml.merges, "left right", in rank order (BPE only)

	BOS, EOS, UNK, PAD, EOT, EOM *int32 // tokenizer.ggml.*_token_id

	AddBOS         *bool // tokenizer.ggml.add_bos_token
	AddEOS         *bool // tokenizer.ggml.add_eos_token
	AddSpacePrefix *bool // tokenizer.ggml.add_space_prefix
}

// Token attributes, llama.cpp's llama_token_attr bits. A token's type sets
// one of them; auto-detection (end-of-turn tokens, FIM tokens) adds control,
// and a few per-model rules add lstrip/rstrip.
type attr uint16

const (
	attrUnknown attr = 1 << iota
	attrUnused
	attrNormal
	attrControl
	attrUserDefined
	attrByte
	attrNormalized
	attrLStrip
	attrRStrip
)

// typeAttrs pairs each token type with the attribute it sets, in the
// order TokenType tests them (auto-detection can add control to a
// token of another type).
var typeAttrs = [...]struct {
	typ  TokenType
	attr attr
}{
	{TokenControl, attrControl},
	{TokenUserDefined, attrUserDefined},
	{TokenUnknown, attrUnknown},
	{TokenByte, attrByte},
	{TokenUnused, attrUnused},
	{TokenNormal, attrNormal},
}

// typeAttr is the attribute a token of type typ starts with (none for
// an undefined type).
func typeAttr(typ TokenType) attr {
	for _, ta := range typeAttrs {
		if ta.typ == typ {
			return ta.attr
		}
	}
	return 0
}

type vocabKind uint8

const (
	kindSPM vocabKind = iota
	kindBPE
)

// preInfo describes one BPE pre-tokenizer: its expressions and the
// per-model switches llama.cpp sets alongside.
type preInfo struct {
	split        []splitter
	ignoreMerges bool // a word that is already a token is not merged
	cleanSpaces  bool // detokenize removes spaces before punctuation
	addBOS       bool // default for add_bos_token
	noBOS        bool // the model has no BOS token by default
}

// preTokenizers maps tokenizer.ggml.pre to its definition, following
// llama.cpp's llama_vocab::load. Names that llama.cpp treats alike share an
// entry.
var preTokenizers = map[string]preInfo{
	"default": {split: splitDefault, cleanSpaces: true},

	"llama3":      {split: splitLlama3, ignoreMerges: true, cleanSpaces: true, addBOS: true},
	"llama-v3":    {split: splitLlama3, ignoreMerges: true, cleanSpaces: true, addBOS: true},
	"llama-bpe":   {split: splitLlama3, ignoreMerges: true, cleanSpaces: true, addBOS: true},
	"falcon3":     {split: splitLlama3, ignoreMerges: true, cleanSpaces: true, addBOS: true},
	"falcon-h1":   {split: splitLlama3, ignoreMerges: true, cleanSpaces: true, addBOS: true},
	"pixtral":     {split: splitLlama3, ignoreMerges: true, cleanSpaces: true, addBOS: true},
	"dbrx":        {split: splitLlama3, cleanSpaces: true},
	"smaug-bpe":   {split: splitLlama3, cleanSpaces: true},
	"glm4":        {split: splitLlama3, cleanSpaces: true, noBOS: true},
	"chatglm-bpe": {split: splitLlama3, cleanSpaces: true, noBOS: true},

	"qwen2":            {split: splitQwen2},
	"qwen35":           {split: splitQwen35},
	"deepseek-r1-qwen": {split: splitQwen2},
	"stablelm2":        {split: splitQwen2, cleanSpaces: true},
	"megrez":           {split: splitQwen2, cleanSpaces: true},
	"hunyuan":          {split: splitQwen2},

	"gpt-2":      {split: splitGPT2, cleanSpaces: true},
	"phi-2":      {split: splitGPT2, cleanSpaces: true},
	"mpt":        {split: splitGPT2, cleanSpaces: true},
	"olmo":       {split: splitGPT2, cleanSpaces: true},
	"jais":       {split: splitGPT2, cleanSpaces: true},
	"gigachat":   {split: splitGPT2, cleanSpaces: true},
	"exaone4":    {split: splitGPT2, cleanSpaces: true},
	"trillion":   {split: splitGPT2},
	"mellum":     {split: splitGPT2, cleanSpaces: true},
	"a.x-4.0":    {split: splitGPT2, cleanSpaces: true},
	"jina-es":    {split: splitGPT2, cleanSpaces: true},
	"jina-de":    {split: splitGPT2, cleanSpaces: true},
	"jina-v2-es": {split: splitGPT2, cleanSpaces: true},
	"jina-v2-de": {split: splitGPT2, cleanSpaces: true},

	"falcon": {split: splitFalcon, cleanSpaces: true},

	"starcoder":  {split: splitStarcoder, cleanSpaces: true},
	"refact":     {split: splitStarcoder, cleanSpaces: true},
	"command-r":  {split: splitStarcoder},
	"smollm":     {split: splitStarcoder},
	"codeshell":  {split: splitStarcoder, cleanSpaces: true},
	"exaone":     {split: splitStarcoder, cleanSpaces: true},
	"minerva-7b": {split: splitStarcoder, cleanSpaces: true},

	"gpt-4o":  {split: splitGPT4o},
	"llama4":  {split: splitGPT4o},
	"kanana2": {split: splitGPT4o},
	"talkie":  {split: splitGPT4o},

	"deepseek-llm":   {split: splitDeepseekLLM},
	"deepseek-coder": {split: splitDeepseekCoder},
}

// Tokens whose text marks them as ending a turn or generation; llama.cpp
// finds them by text because older conversions do not say so in metadata.
var (
	eotTexts = []string{
		"<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>",
		"<|end_of_text|>", "<EOT>", "_<EOT>", "[EOT]", "<｜end▁of▁sentence｜>", "<end_of_utterance>",
	}
	// llama.cpp v0.5.0's list. "</s>" is on it (PaddleOCR), which makes
	// Gemma's HTML strikethrough tag a control token that ends generation
	// and is not cut out of text typed by a person.
	eogTexts = []string{
		"<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>", "<|calls|>",
		"<end_of_turn>", "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]", "[EOS]",
		"<|end_of_text|>", "<end_of_utterance>", "<eos>", "<turn|>", "<|tool_response>",
		"<｜end▁of▁sentence｜>", "[e~[",
	}
	fimPadTexts = []string{"<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>"}
	fimRepTexts = []string{"<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>"}
	fimSepTexts = []string{"<|file_sep|>"}
	fimOther    = []string{
		"<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<｜fim▁begin｜>", "<PRE>", "▁<PRE>",
		"<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<｜fim▁hole｜>", "<SUF>", "▁<SUF>",
		"<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<｜fim▁end｜>", "<MID>", "▁<MID>",
	}
)

// New builds a tokenizer from vocabulary metadata. It applies llama.cpp's
// defaults and derivations: default special ids per model type, end-of-turn
// and FIM tokens detected by their text (and treated as control tokens),
// the end-of-generation set, and the per-model strip rules.
func New(v Vocab) (*Tokenizer, error) {
	n := len(v.Tokens)
	if n == 0 {
		return nil, fmt.Errorf("%w: no tokens", ErrInvalidVocab)
	}
	if n > 1<<31-1 {
		return nil, fmt.Errorf("%w: %d tokens", ErrInvalidVocab, n)
	}
	if v.Scores != nil && len(v.Scores) < n {
		return nil, fmt.Errorf("%w: %d scores for %d tokens", ErrInvalidVocab, len(v.Scores), n)
	}
	if v.Types != nil && len(v.Types) < n {
		return nil, fmt.Errorf("%w: %d token types for %d tokens", ErrInvalidVocab, len(v.Types), n)
	}

	t := &Tokenizer{
		bos: -1, eos: -1, unk: -1, pad: -1, eot: -1, eom: -1,
		model: v.Model,
		pre:   v.Pre,
	}
	var pre preInfo
	switch v.Model {
	case "llama":
		t.kind = kindSPM
		t.bos, t.eos, t.unk = 1, 2, 0
		t.addSpacePrefix = true
		t.addBOS = true
	case "gpt2":
		t.kind = kindBPE
		name := v.Pre
		if name == "" {
			name = "default"
		}
		var ok bool
		pre, ok = preTokenizers[name]
		if !ok {
			return nil, fmt.Errorf("%w: %q", ErrUnsupportedPre, v.Pre)
		}
		t.split = pre.split
		t.ignoreMerges = pre.ignoreMerges
		t.cleanSpaces = pre.cleanSpaces
		t.addBOS = pre.addBOS
		t.bos, t.eos = 11, 11 // llama.cpp's defaults for BPE (GPT-NeoX / Falcon era)
		if pre.noBOS {
			t.bos = -1
		}
		if v.Merges == nil {
			return nil, fmt.Errorf("%w: BPE vocabulary without merges", ErrInvalidVocab)
		}
	case "":
		return nil, fmt.Errorf("%w: tokenizer.ggml.model is not set", ErrUnsupportedModel)
	default:
		return nil, fmt.Errorf("%w: %q (supported: \"llama\", \"gpt2\")", ErrUnsupportedModel, v.Model)
	}
	if v.AddSpacePrefix != nil {
		t.addSpacePrefix = *v.AddSpacePrefix
	}

	// Tokens, scores, attributes.
	t.tokens = make([]string, n)
	t.ids = make(map[string]int32, n)
	t.attrs = make([]attr, n)
	t.types = make([]TokenType, n)
	if v.Scores != nil {
		t.scores = v.Scores[:n:n]
	}
	for i, w := range v.Tokens {
		if w == "" {
			w = "[EMPTY_" + strconv.Itoa(i) + "]"
		}
		if j, dup := t.ids[w]; dup {
			return nil, fmt.Errorf("%w: duplicate token %q (ids %d and %d)", ErrInvalidVocab, w, j, i)
		}
		t.ids[w] = int32(i)
		t.tokens[i] = w
		typ := TokenNormal
		if v.Types != nil {
			typ = v.Types[i]
		}
		t.types[i] = typ
		t.attrs[i] = typeAttr(typ)
	}

	// Special ids: defaults outside the vocabulary are disabled; metadata
	// overrides them when in range.
	inRange := func(id int32) bool { return id >= 0 && int(id) < n }
	for _, p := range []*int32{&t.bos, &t.eos, &t.unk} {
		if !inRange(*p) {
			*p = -1
		}
	}
	set := func(dst *int32, src *int32) {
		if src != nil && inRange(*src) {
			*dst = *src
		}
	}
	set(&t.bos, v.BOS)
	set(&t.eos, v.EOS)
	set(&t.unk, v.UNK)
	set(&t.pad, v.PAD)
	set(&t.eot, v.EOT)
	set(&t.eom, v.EOM)
	if v.AddBOS != nil {
		t.addBOS = *v.AddBOS
	}
	if v.AddEOS != nil {
		t.addEOS = *v.AddEOS
	}

	t.detectSpecial()

	// Special tokens recognised in text, longest first.
	for i, a := range t.attrs {
		if a&(attrControl|attrUserDefined|attrUnknown) != 0 {
			t.specials = append(t.specials, int32(i))
		}
	}
	sort.SliceStable(t.specials, func(a, b int) bool {
		return len(t.tokens[t.specials[a]]) > len(t.tokens[t.specials[b]])
	})
	t.stripRules(v.Name, v.Pre)

	switch t.kind {
	case kindSPM:
		for b := 0; b < 256; b++ {
			t.byteTok[b] = -1
			if id, ok := t.ids[fmt.Sprintf("<0x%02X>", b)]; ok {
				t.byteTok[b] = id
			} else if id, ok := t.ids[string([]byte{byte(b)})]; ok {
				t.byteTok[b] = id
			}
		}
	case kindBPE:
		t.buildRanks(v.Merges)
	}
	return t, nil
}

// detectSpecial finds end-of-turn, end-of-message and FIM tokens by their
// text, marks them as control tokens, and builds the end-of-generation set.
func (t *Tokenizer) detectSpecial() {
	markControl := func(id int32) { t.attrs[id] |= attrControl }
	first := func(texts []string) int32 {
		for _, s := range texts {
			if id, ok := t.ids[s]; ok {
				return id
			}
		}
		return -1
	}
	if t.eot < 0 {
		if id := first(eotTexts); id >= 0 {
			t.eot = id
			markControl(id)
		}
	}
	if t.eom < 0 {
		if id, ok := t.ids["<|eom_id|>"]; ok {
			t.eom = id
			markControl(id)
		}
	}
	t.eog = make(map[int32]bool)
	for _, group := range [][]string{fimPadTexts, fimRepTexts, fimSepTexts} {
		if id := first(group); id >= 0 {
			markControl(id)
			t.eog[id] = true
		}
	}
	for _, s := range fimOther {
		if id, ok := t.ids[s]; ok {
			markControl(id)
		}
	}
	for _, s := range eogTexts {
		if id, ok := t.ids[s]; ok {
			t.eog[id] = true
			markControl(id)
		}
	}
	// gpt-oss's channel markers are rendered as text so that the chat
	// layer can parse them.
	for _, s := range []string{"<|channel|>", "<|message|>", "<|start|>", "<|constrain|>"} {
		if id, ok := t.ids[s]; ok {
			t.attrs[id] = attrUserDefined
		}
	}
	for _, id := range []int32{t.eos, t.eot, t.eom} {
		if id >= 0 {
			t.eog[id] = true
		}
	}
	// Harmony-style vocabularies end a turn with <|return|> or <|call|>,
	// and <|end|> only separates messages.
	// (Solar Open's the same with <|calls|> and <|flush|>.)
	inEOG := func(text string) bool {
		id, ok := t.ids[text]
		return ok && t.eog[id]
	}
	hasCall := inEOG("<|call|>") || inEOG("<|calls|>")
	if end, ok := t.ids["<|end|>"]; ok && t.eog[end] && hasCall && (inEOG("<|return|>") || inEOG("<|flush|>")) {
		delete(t.eog, end)
		t.attrs[end] = attrUserDefined
	}
	// Gemma 4 has a </s> that is plain text: llama.cpp takes it off the
	// list again where <|tool_response> is on it.
	if s, ok := t.ids["</s>"]; ok && t.eog[s] && inEOG("<|tool_response>") {
		delete(t.eog, s)
		t.attrs[s] = attrNormal
	}
}

// stripRules applies llama.cpp's per-model lstrip/rstrip attributes, which
// make whitespace next to a special token part of it.
func (t *Tokenizer) stripRules(name, pre string) {
	setAttr := func(s string, a attr, on bool) {
		id, ok := t.ids[s]
		if !ok {
			return
		}
		if on {
			t.attrs[id] |= a
		} else {
			t.attrs[id] &^= a
		}
	}
	lname := strings.ToLower(name)
	switch {
	case strings.Contains(pre, "jina-v2-de") || strings.Contains(pre, "jina-v2-es") || strings.Contains(pre, "jina-v2-code"):
		setAttr("<mask>", attrLStrip, true)
	case strings.Contains(lname, "phi-3") || strings.Contains(lname, "phi3"):
		for _, id := range t.specials {
			t.attrs[id] |= attrRStrip
		}
		setAttr("</s>", attrRStrip, true)
		for _, s := range []string{"<unk>", "<s>", "<|endoftext|>"} {
			setAttr(s, attrRStrip, false)
		}
	}
}

// buildRanks indexes the BPE merges. Pairs of known tokens are keyed by
// their ids; the rare merge naming a string that is not a token keeps a
// string key. The first occurrence of a pair wins, as in llama.cpp.
func (t *Tokenizer) buildRanks(merges []string) {
	t.rankID = make(map[uint64]int32, len(merges))
	for i, m := range merges {
		var a, b string
		if p := strings.IndexByte(m[min(1, len(m)):], ' '); p >= 0 {
			p += min(1, len(m))
			a, b = m[:p], m[p+1:]
		}
		ia, okA := t.ids[a]
		ib, okB := t.ids[b]
		if okA && okB {
			k := uint64(uint32(ia))<<32 | uint64(uint32(ib))
			if _, dup := t.rankID[k]; !dup {
				t.rankID[k] = int32(i)
			}
			continue
		}
		if t.rankStr == nil {
			t.rankStr = make(map[[2]string]int32)
		}
		k := [2]string{a, b}
		if _, dup := t.rankStr[k]; !dup {
			t.rankStr[k] = int32(i)
		}
	}
}
