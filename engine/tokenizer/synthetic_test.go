package tokenizer

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func i32(v int32) *int32 { return &v }
func bptr(v bool) *bool  { return &v }

// byteVocab is a small SentencePiece vocabulary with byte fallback.
func byteVocab(t testing.TB) *Tokenizer {
	t.Helper()
	v := Vocab{Model: "llama"}
	add := func(s string, score float32, typ TokenType) {
		v.Tokens = append(v.Tokens, s)
		v.Scores = append(v.Scores, score)
		v.Types = append(v.Types, typ)
	}
	add("<unk>", 0, TokenUnknown)
	add("<s>", 0, TokenControl)
	add("</s>", 0, TokenControl)
	for b := 0; b < 256; b++ {
		add(fmt.Sprintf("<0x%02X>", b), 0, TokenByte)
	}
	add("▁", -1, TokenNormal)
	add("a", -2, TokenNormal)
	add("b", -2, TokenNormal)
	add("ab", -3, TokenNormal)
	add("▁a", -1.5, TokenNormal)
	add("▁ab", -0.5, TokenNormal)
	add("<|user|>", 0, TokenUserDefined)
	tk, err := New(v)
	if err != nil {
		t.Fatal(err)
	}
	return tk
}

// bpeVocab is a small byte-level BPE vocabulary: every byte plus a few
// merges.
func bpeVocab(t testing.TB, pre string) *Tokenizer {
	t.Helper()
	v := Vocab{Model: "gpt2", Pre: pre}
	for b := 0; b < 256; b++ {
		v.Tokens = append(v.Tokens, byteToUTF8[b])
	}
	v.Merges = []string{"h e", "l l", "he ll", "hell o", "Ġ w", "Ġw o", "r l", "Ġwo rl", "Ġworl d"}
	for _, m := range v.Merges {
		v.Tokens = append(v.Tokens, strings.ReplaceAll(m, " ", ""))
	}
	v.Tokens = append(v.Tokens, "<|endoftext|>", "<|im_end|>")
	v.Types = make([]TokenType, len(v.Tokens))
	for i := range v.Types {
		v.Types[i] = TokenNormal
	}
	v.Types[len(v.Types)-2] = TokenControl
	v.EOS = i32(int32(len(v.Tokens) - 2))
	tk, err := New(v)
	if err != nil {
		t.Fatal(err)
	}
	return tk
}

func TestNewErrors(t *testing.T) {
	tests := []struct {
		name string
		v    Vocab
		want error
	}{
		{"no tokens", Vocab{Model: "llama"}, ErrInvalidVocab},
		{"no model", Vocab{Tokens: []string{"a"}}, ErrUnsupportedModel},
		{"bert", Vocab{Model: "bert", Tokens: []string{"a"}}, ErrUnsupportedModel},
		{"t5", Vocab{Model: "t5", Tokens: []string{"a"}}, ErrUnsupportedModel},
		{"unknown pre", Vocab{Model: "gpt2", Pre: "no-such-pre", Tokens: []string{"a"}, Merges: []string{}}, ErrUnsupportedPre},
		{"no merges", Vocab{Model: "gpt2", Tokens: []string{"a"}}, ErrInvalidVocab},
		{"short scores", Vocab{Model: "llama", Tokens: []string{"a", "b"}, Scores: []float32{0}}, ErrInvalidVocab},
		{"short types", Vocab{Model: "llama", Tokens: []string{"a", "b"}, Types: []TokenType{1}}, ErrInvalidVocab},
		{"duplicate", Vocab{Model: "llama", Tokens: []string{"a", "b", "a"}}, ErrInvalidVocab},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(tc.v)
			if !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
		})
	}
	_, err := New(Vocab{Model: "bert", Tokens: []string{"a"}})
	if !strings.Contains(err.Error(), `"bert"`) {
		t.Errorf("error %q does not name the model", err)
	}
	_, err = New(Vocab{Model: "gpt2", Pre: "no-such-pre", Tokens: []string{"a"}, Merges: []string{}})
	if !strings.Contains(err.Error(), `"no-such-pre"`) {
		t.Errorf("error %q does not name the pre-tokenizer", err)
	}
}

func TestSPMSynthetic(t *testing.T) {
	tk := byteVocab(t)
	id := func(s string) int32 {
		v, ok := tk.Lookup(s)
		if !ok {
			t.Fatalf("no token %q", s)
		}
		return v
	}
	tests := []struct {
		text string
		opt  EncodeOptions
		want []int32
	}{
		{"", EncodeOptions{}, []int32{}},
		{"", EncodeOptions{AddSpecial: true}, []int32{1}},
		{"ab", EncodeOptions{}, []int32{id("▁ab")}},
		{"ab", EncodeOptions{AddSpecial: true}, []int32{1, id("▁ab")}},
		{"abab", EncodeOptions{}, []int32{id("▁ab"), id("ab")}},
		{"a b", EncodeOptions{}, []int32{id("▁a"), id("▁"), id("b")}},
		// Byte fallback: "가" has no token.
		{"가", EncodeOptions{}, []int32{id("▁"), id("<0xEA>"), id("<0xB0>"), id("<0x80>")}},
		// Control text is not parsed without ParseSpecial...
		{"<s>", EncodeOptions{}, []int32{id("▁"), id("<0x3C>"), id("<0x73>"), id("<0x3E>")}},
		// ...and is with it; the text after it gets the space prefix again.
		{"<s>ab", EncodeOptions{ParseSpecial: true}, []int32{1, id("▁ab")}},
		// User-defined tokens are always recognised.
		{"ab<|user|>ab", EncodeOptions{}, []int32{id("▁ab"), id("<|user|>"), id("▁ab")}},
	}
	for _, tc := range tests {
		got := tk.Encode(tc.text, tc.opt)
		if !slices.Equal(got, tc.want) {
			t.Errorf("Encode(%q, %+v) = %v, want %v", tc.text, tc.opt, got, tc.want)
		}
	}
	if got := tk.Decode([]int32{id("▁ab"), id("▁a")}, DecodeOptions{}); got != "ab a" {
		t.Errorf("Decode = %q", got)
	}
	if got := tk.Decode([]int32{id("▁ab"), id("▁a")}, DecodeOptions{KeepLeadingSpace: true}); got != " ab a" {
		t.Errorf("Decode keep = %q", got)
	}
	// llama.cpp quirk: removing BOS also keeps the leading space.
	if got := tk.Decode([]int32{1, id("▁ab")}, DecodeOptions{RemoveSpecial: true}); got != " ab" {
		t.Errorf("Decode remove-special = %q", got)
	}
	if got := tk.Decode([]int32{1, id("▁ab"), 2}, DecodeOptions{Special: true}); got != "<s> ab</s>" {
		t.Errorf("Decode special = %q", got)
	}
	if got := tk.Decode([]int32{0, id("a"), -5, 1 << 30}, DecodeOptions{}); got != "a" {
		t.Errorf("Decode with unknown/invalid ids = %q", got)
	}
	if !tk.IsEOG(2) || tk.IsEOG(1) || tk.BOS() != 1 || tk.EOS() != 2 || !tk.AddBOS() || tk.AddEOS() {
		t.Errorf("special ids: bos %d eos %d addbos %v", tk.BOS(), tk.EOS(), tk.AddBOS())
	}
	if tk.TokenType(3) != TokenByte || tk.TokenType(0) != TokenUnknown || tk.TokenType(-1) != TokenUndefined {
		t.Errorf("token types wrong")
	}
	if b := tk.TokenBytes(id("<0xEA>")); !reflect.DeepEqual(b, []byte{0xEA}) {
		t.Errorf("TokenBytes(<0xEA>) = %v", b)
	}
	if b := tk.TokenBytes(1); len(b) != 0 {
		t.Errorf("TokenBytes(<s>) = %q, want empty", b)
	}
	if b := tk.Piece(1, true); string(b) != "<s>" {
		t.Errorf("Piece(<s>, special) = %q", b)
	}
}

func TestBPESynthetic(t *testing.T) {
	tk := bpeVocab(t, "gpt-2")
	id := func(s string) int32 {
		v, ok := tk.Lookup(s)
		if !ok {
			t.Fatalf("no token %q", s)
		}
		return v
	}
	got := tk.Encode("hello world", EncodeOptions{})
	want := []int32{id("hello"), id("Ġworld")}
	if !slices.Equal(got, want) {
		t.Fatalf("Encode = %v, want %v", got, want)
	}
	// "<|endoftext|>" is control: plain text without ParseSpecial.
	got = tk.Encode("<|endoftext|>", EncodeOptions{})
	if len(got) < 3 {
		t.Fatalf("control text was parsed without ParseSpecial: %v", got)
	}
	got = tk.Encode("hello<|endoftext|>", EncodeOptions{ParseSpecial: true})
	if !slices.Equal(got, []int32{id("hello"), id("<|endoftext|>")}) {
		t.Fatalf("ParseSpecial: %v", got)
	}
	// "<|im_end|>" was a normal token: llama.cpp's text rule makes it a
	// control token and an end of generation.
	if e := id("<|im_end|>"); !tk.IsEOG(e) || tk.TokenType(e) != TokenControl || tk.EOT() != e {
		t.Errorf("<|im_end|> not detected: eog %v type %v eot %d", tk.IsEOG(e), tk.TokenType(e), tk.EOT())
	}
	if s := tk.Decode(tk.Encode("héllo, 세계 😊", EncodeOptions{}), DecodeOptions{}); s != "héllo, 세계 😊" {
		t.Errorf("round trip: %q", s)
	}
	// Default BPE special ids are 11/11 in llama.cpp; here EOS comes from
	// metadata and BOS stays at the default.
	if tk.BOS() != 11 || tk.EOS() != id("<|endoftext|>") || tk.AddBOS() {
		t.Errorf("bos %d eos %d addbos %v", tk.BOS(), tk.EOS(), tk.AddBOS())
	}
}

func TestCleanSpaces(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Hello , world !", "Hello, world!"},
		{"a ' b", "a'b"},
		{"it 's , he 'll , we 're , I 'd", "it's, he 'll, we're, I 'd"},
		{"", ""},
		{" .", "."},
	}
	for _, tc := range tests {
		if got := string(cleanSpaces([]byte(tc.in))); got != tc.want {
			t.Errorf("cleanSpaces(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	tk := bpeVocab(t, "gpt-2")
	ids := tk.Encode("hello , world", EncodeOptions{})
	if got := tk.Decode(ids, DecodeOptions{CleanSpaces: true}); got != "hello, world" {
		t.Errorf("Decode CleanSpaces = %q", got)
	}
	if got := tk.Decode(ids, DecodeOptions{}); got != "hello , world" {
		t.Errorf("Decode = %q", got)
	}
	q := bpeVocab(t, "qwen2") // qwen2 does not clean spaces
	if got := q.Decode(q.Encode("a , b", EncodeOptions{}), DecodeOptions{CleanSpaces: true}); got != "a , b" {
		t.Errorf("qwen2 CleanSpaces = %q", got)
	}
}

func TestPartitionStrip(t *testing.T) {
	// Phi-3 rule (by general.name): special tokens swallow whitespace on
	// their right, except <s>, <unk> and <|endoftext|>.
	v := Vocab{Model: "llama", Name: "Phi3", Tokens: []string{"<unk>", "<s>", "<sep>", "<|end|>", "▁", "x"},
		Types: []TokenType{TokenUnknown, TokenControl, TokenUserDefined, TokenControl, TokenNormal, TokenNormal}}
	tk, err := New(v)
	if err != nil {
		t.Fatal(err)
	}
	got := tk.Encode("x<|end|>  \n x<sep> x<s> x", EncodeOptions{ParseSpecial: true})
	want := []int32{4, 5, 3, 4, 5, 2, 4, 5, 1, 4, 4, 5}
	if !slices.Equal(got, want) {
		t.Errorf("Phi-3 strip: got %v, want %v", got, want)
	}
	v.Name = "llama"
	tk, err = New(v)
	if err != nil {
		t.Fatal(err)
	}
	got = tk.Encode("x<sep> x", EncodeOptions{})
	want = []int32{4, 5, 2, 4, 4, 5}
	if !slices.Equal(got, want) {
		t.Errorf("no strip: got %v, want %v", got, want)
	}
}

// TestPreTokenizers checks the hand-written splitters on the cases their
// regular expressions make tricky.
func TestPreTokenizers(t *testing.T) {
	tests := []struct {
		name  string
		split []splitter
		in    string
		want  []string
	}{
		{"gpt2", splitGPT2, "Hello world's  end\n\n x 123", []string{"Hello", " world", "'s", " ", " end", "\n\n", " x", " 123"}},
		{"gpt2 trailing", splitGPT2, "a   ", []string{"a", "   "}},
		{"llama3", splitLlama3, "I'VE 12345 ab!!\n\n  c", []string{"I", "'VE", " ", "123", "45", " ab", "!!\n\n", " ", " c"}},
		{"llama3 newlines", splitLlama3, "a \n \n b", []string{"a", " \n \n", " b"}},
		{"qwen2 digits", splitQwen2, "x2024", []string{"x", "2", "0", "2", "4"}},
		// A combining mark (U+0308) ends qwen2's letter run and starts the
		// next as its one leading non-letter; qwen35's runs take marks in,
		// and its punctuation runs stop at them.
		{"qwen2 marks", splitQwen2, "nai\u0308ve x!!\u0301", []string{"nai", "\u0308ve", " x", "!!\u0301"}},
		{"qwen35 marks", splitQwen35, "nai\u0308ve x!!\u0301 2024", []string{"nai\u0308ve", " x", "!!", "\u0301", " ", "2", "0", "2", "4"}},
		{"default", splitDefault, "a+b=c 12345 ~x", []string{"a", "+", "b", "=", "c", " ", "123", "45", " ", "~", "x"}},
		{"falcon", splitFalcon, "a`b 1234", []string{"a", "`", "b", " ", "123", "4"}},
		{"starcoder", splitStarcoder, "x 123", []string{"x", " ", "1", "2", "3"}},
		{"deepseek-coder", splitDeepseekCoder, "if x1:\n 한국", []string{"if", " x", "1", ":", "\n", " ", "한국"}},
		{"deepseek-llm", splitDeepseekLLM, "Γειά 세계!! 12  ", []string{"Γειά", " ", "세계", "!!", " ", "12", "  "}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var pt ptext
			pt.reset(tc.in)
			var bufs [2][]int
			var got []string
			start := 0
			for _, n := range pretokenize(&pt, tc.split, &bufs) {
				got = append(got, string(pt.cps[start:start+n]))
				start += n
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("split(%q)\n  got  %q\n  want %q", tc.in, got, tc.want)
			}
		})
	}
}

// TestDecodeCpt pins llama.cpp's lenient UTF-8 decoding.
func TestDecodeCpt(t *testing.T) {
	tests := []struct {
		in   string
		want []rune
	}{
		{"a가", []rune{'a', 0xAC00}},
		{"\xff", []rune{0xFFFD}},
		{"\xea\xb0", []rune{0xFFFD, 0xFFFD}},
		{"\xed\xa0\x80", []rune{0xD800}}, // a surrogate passes, as in llama.cpp
		{"\xc0\x80", []rune{0}},          // so does an overlong form
		{"\xf7\xbf\xbf\xbf", []rune{0xFFFD}},
	}
	for _, tc := range tests {
		if got := decodeCpts(nil, tc.in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("decodeCpts(%q) = %U, want %U", tc.in, got, tc.want)
		}
	}
	if got := appendCpt(nil, 0xD800); string(got) != "\xed\xa0\x80" {
		t.Errorf("appendCpt(D800) = %q", got)
	}
}

// TestConcurrentUse runs Encode and Decode from several goroutines on one
// Tokenizer (run with -race).
func TestConcurrentUse(t *testing.T) {
	tks := []*Tokenizer{byteVocab(t), bpeVocab(t, "llama-bpe")}
	done := make(chan string)
	for g := 0; g < 4; g++ {
		go func() {
			msg := ""
			for i := 0; i < 200 && msg == ""; i++ {
				for _, tk := range tks {
					s := fmt.Sprintf("hello world %d 안녕 <|user|>", i)
					if got := tk.Decode(tk.Encode(s, EncodeOptions{}), DecodeOptions{}); got != s {
						msg = fmt.Sprintf("round trip %q gave %q", s, got)
					}
				}
			}
			done <- msg
		}()
	}
	for g := 0; g < 4; g++ {
		if msg := <-done; msg != "" {
			t.Error(msg)
		}
	}
}
