package engine

import (
	"fmt"
	"slices"
	"testing"

	"github.com/churon/churon/engine/chat"
	"github.com/churon/churon/engine/tokenizer"
	"github.com/churon/churon/models/synth"
)

// TestAlignPrompt: a cache holding a turn's generated ids, which its
// tokenizer would have made otherwise, is reused for the whole turn by
// the next prompt; the prompt fed spells exactly the prompt's text; and a
// special token is never matched by ordinary text that looks like it.
func TestAlignPrompt(t *testing.T) {
	m := synthModel(t, synth.Tiny("qwen2"))
	tok := m.Tokenizer()
	render := func(msgs ...chat.Message) []int32 {
		t.Helper()
		ids, _, err := m.ChatTokens(t.Context(), msgs)
		if err != nil {
			t.Fatal(err)
		}
		return ids
	}
	spelled := func(ids []int32) string {
		return tok.Decode(ids, tokenizer.DecodeOptions{Special: true, KeepLeadingSpace: true})
	}
	question := chat.Message{Role: "user", Content: "Tell me about 서울."}
	answer := "Seoul is the capital of Korea; 서울은 한국의 수도입니다."
	first := render(question)
	// The answer as a model might generate it: byte by byte, which the
	// tokenizer, merging, would not do.
	var generated []int32
	for _, b := range []byte(answer) {
		id, ok := tok.Lookup(fmt.Sprintf("<0x%02X>", b))
		if !ok {
			t.Fatalf("no byte token for %#x", b)
		}
		generated = append(generated, id)
	}
	canonical := m.TokenizePrompt(answer, false, false)
	if slices.Equal(generated, canonical) {
		t.Fatal("the character-wise answer is the canonical one: the test would prove nothing")
	}
	cached := append(slices.Clone(first), generated...)
	next := render(question, chat.Message{Role: "assistant", Content: answer}, chat.Message{Role: "user", Content: "And Busan?"})
	if n := CommonPrefix(cached, next); n >= len(cached) {
		t.Fatalf("plain prefix matching already reuses %d of %d: the test would prove nothing", n, len(cached))
	}

	cases := []struct {
		name        string
		cached      []int32
		prompt      []int32
		wantReused  int // at least
		wantCachedN bool
	}{
		{"follow-up after a generated answer", cached, next, len(cached) - 1, false},
		{"the same prompt", next, next, len(next), false},
		{"nothing cached", nil, next, 0, false},
		{"another conversation", render(chat.Message{Role: "user", Content: "Hi"}), next, 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ids, reused := m.AlignPrompt(c.cached, c.prompt, 1<<20)
			if reused < c.wantReused {
				t.Errorf("reused %d tokens; want at least %d", reused, c.wantReused)
			}
			if !slices.Equal(ids[:reused], c.cached[:reused]) {
				t.Errorf("the reused tokens are not the cache's")
			}
			if got, want := spelled(ids), spelled(c.prompt); got != want {
				t.Errorf("the prompt fed spells\n%q\nwant\n%q", got, want)
			}
		})
	}

	// "</s>" written as ordinary text spells what the control token does,
	// but it does not end a turn: no reuse across it.
	endID := tok.EOS()
	end := tok.Token(endID)
	asText := append(slices.Clone(first), m.TokenizePrompt("ok"+end+" more", false, false)...)
	asToken := append(slices.Clone(first), m.TokenizePrompt("ok"+end+"more", false, true)...)
	if spelled(asText) != spelled(asToken) {
		t.Fatalf("the two spell differently: %q, %q", spelled(asText), spelled(asToken))
	}
	ids, reused := m.AlignPrompt(asText, asToken, 1<<20)
	if reused > len(first)+len(m.TokenizePrompt("ok", false, false)) {
		t.Errorf("reused %d tokens: past a control token that the cache holds only as text", reused)
	}
	if !slices.Contains(ids[reused:], endID) {
		t.Errorf("the control token is not fed")
	}
}

// TestEncodeContinue: text tokenized as a continuation gets no
// SentencePiece space prefix; the same text as a prompt's start does.
func TestEncodeContinue(t *testing.T) {
	tok := synthModel(t, synth.Tiny("qwen2")).Tokenizer()
	spelled := func(ids []int32) string {
		return tok.Decode(ids, tokenizer.DecodeOptions{Special: true, KeepLeadingSpace: true})
	}
	for _, c := range []struct {
		opt  tokenizer.EncodeOptions
		want string
	}{
		{tokenizer.EncodeOptions{}, " more</s>"},
		{tokenizer.EncodeOptions{ParseSpecial: true}, " more</s>"},
		{tokenizer.EncodeOptions{Continue: true}, "more</s>"},
		{tokenizer.EncodeOptions{ParseSpecial: true, Continue: true}, "more</s>"},
	} {
		if got := spelled(tok.Encode("more</s>", c.opt)); got != c.want {
			t.Errorf("%+v: spells %q, want %q", c.opt, got, c.want)
		}
	}
}

// TestFollowUpOnlyTheAnswer: where the cache runs on past the answer — a
// later turn, since regenerated or edited away — only the answer's own
// tokens are kept, and not its end-of-generation token, which the
// template writes after the answer itself.
func TestFollowUpOnlyTheAnswer(t *testing.T) {
	m := synthModel(t, synth.Tiny("qwen2"))
	tok := m.Tokenizer()
	render := func(msgs ...chat.Message) (string, []int32) {
		t.Helper()
		ids, text, err := m.ChatTokens(t.Context(), msgs)
		if err != nil {
			t.Fatal(err)
		}
		return text, ids
	}
	q := chat.Message{Role: "user", Content: "Where is Seoul?"}
	answer := "In Korea."
	before, prompt := render(q)
	cont := func(s string) []int32 { return tok.Encode(s, tokenizer.EncodeOptions{Continue: true}) }
	gen := append(cont(answer), tok.EOS())
	later := cont("<|im_end|>\n<|im_start|>user\nSomething else")
	cached := append(append(slices.Clone(prompt), gen...), later...)
	full, canon := render(q, chat.Message{Role: "assistant", Content: answer}, chat.Message{Role: "user", Content: "And Busan?"})
	ids, ok := m.FollowUp(cached, len(prompt), len(gen), before, answer, full)
	if !ok {
		t.Fatal("FollowUp refused a cache that holds the answer")
	}
	if got := len(ids) - len(prompt); got < len(gen)-1 {
		t.Errorf("kept %d tokens after the prompt; the answer has %d", got, len(gen)-1)
	}
	if slices.Contains(ids, tok.EOS()) {
		t.Errorf("the answer's end of generation is kept: %q", tok.Decode(ids, tokenizer.DecodeOptions{Special: true}))
	}
	spelled := func(x []int32) string {
		return tok.Decode(x, tokenizer.DecodeOptions{Special: true, KeepLeadingSpace: true})
	}
	if spelled(ids) != spelled(canon) {
		t.Errorf("the prompt spells\n%q\nwant\n%q", spelled(ids), spelled(canon))
	}
}

// TestCommonPrefix: the shared prefix stops at the first difference or
// at the end of the shorter sequence.
func TestCommonPrefix(t *testing.T) {
	for _, c := range []struct {
		a, b []int32
		want int
	}{
		{nil, nil, 0},
		{nil, []int32{1}, 0},
		{[]int32{1, 2, 3}, []int32{1, 2, 3}, 3},
		{[]int32{1, 2, 3}, []int32{1, 2}, 2},
		{[]int32{1, 2}, []int32{1, 2, 3}, 2},
		{[]int32{1, 2, 3}, []int32{1, 9, 3}, 1},
		{[]int32{7}, []int32{1}, 0},
	} {
		if got := CommonPrefix(c.a, c.b); got != c.want {
			t.Errorf("CommonPrefix(%v, %v) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}
