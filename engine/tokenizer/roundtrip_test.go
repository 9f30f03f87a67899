package tokenizer

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// roundTripTexts are strings that must survive Encode then Decode.
var roundTripTexts = []string{
	"",
	"a",
	"Hello world",
	" Hello world",
	"  two leading spaces",
	"trailing spaces   ",
	"학습이 완료된 모델을 사용해 새로운 데이터에 대한 예측을 수행합니다.",
	"똠방각하 쀍 뷁 햏 꽯 읭 뙇",
	"ㄱㄴㄷ ㅏㅑㅓ ㅋㅋㅋ",
	"오늘 날씨 최고예요 😊👍🏻 🇰🇷 👨‍👩‍👧‍👦 가족 🏳️‍🌈",
	"大韓民國 憲法 제1조 ① 대한민국은 민주공화국이다.",
	"for (int i = 0; i < n; ++i) {\n    합계 += 배열[i];\t// 누적\n}",
	"mixed: English, 한국어, 日本語, Русский, العربية, हिन्दी.",
	"\t\n\r\n  \u3000 \u00a0 end",
	"I'm 학생이에요, you're 선생님's friend, 그렇죠? We'VE 'll 'd",
	"1,234,567.89원 010-1234-5678",
	"\ufeff가\u200b나\u200c다\u200d라 e\u0301 \u0301a 가\u0300",
	"<|im_start|>user\n안녕하세요<|im_end|>",
}

// TestRoundTrip checks Decode(Encode(s)) == s on every vocabulary in the
// test data. For SentencePiece, Decode removes the space that the space
// prefix added.
func TestRoundTrip(t *testing.T) {
	dir := vocabDir(t)
	for _, name := range []string{"llama3", "qwen3", "gpt-2", "mpt", "falcon", "starcoder", "refact",
		"deepseek-llm", "deepseek-coder", "gpt-neox", "llama-spm", "phi-3", "baichuan"} {
		t.Run(name, func(t *testing.T) {
			if _, err := os.Stat(filepath.Join(dir, "ggml-vocab-"+name+".gguf")); err != nil {
				t.Skipf("SKIP: ggml-vocab-%s.gguf not in the test data", name)
			}
			tk := loadVocab(t, name)
			for _, s := range roundTripTexts {
				for _, parse := range []bool{false, true} {
					ids := tk.Encode(s, EncodeOptions{ParseSpecial: parse})
					got := tk.Decode(ids, DecodeOptions{Special: true})
					want := s
					if tk.kind == kindSPM && parse && strings.Contains(s, "<|") {
						// Phi-3's special tokens swallow the whitespace that
						// follows them, by design.
						continue
					}
					if got != want {
						t.Errorf("parse=%v %q:\n  ids  %v\n  got  %q", parse, s, ids, got)
					}
				}
			}
		})
	}
}

// TestStreamDecoderKorean feeds Korean one token at a time: no partial
// character may come out, and the pieces must add up to Decode.
func TestStreamDecoderKorean(t *testing.T) {
	dir := vocabDir(t)
	texts := []string{
		"학습이 완료된 모델을 사용해 새로운 데이터에 대한 예측을 수행합니다.",
		"똠방각하 쀍 뷁 햏 꽯 읭 뙇 😊👍🏻 🇰🇷",
		"ㄱㄴㄷㄹㅁㅂㅅㅇㅈㅊㅋㅌㅍㅎ ㅏㅑㅓㅕㅗㅛㅜㅠㅡㅣ",
	}
	for _, name := range []string{"llama-spm", "phi-3", "llama3", "qwen3", "gpt-2", "deepseek-llm"} {
		t.Run(name, func(t *testing.T) {
			if _, err := os.Stat(filepath.Join(dir, "ggml-vocab-"+name+".gguf")); err != nil {
				t.Skipf("SKIP: ggml-vocab-%s.gguf not in the test data", name)
			}
			tk := loadVocab(t, name)
			split := 0
			for _, s := range texts {
				ids := tk.Encode(s, EncodeOptions{})
				for _, opt := range []DecodeOptions{{}, {KeepLeadingSpace: true}} {
					dec := tk.NewDecoder(opt)
					var sb strings.Builder
					for _, id := range ids {
						if !utf8.Valid(tk.TokenBytes(id)) {
							split++
						}
						out := dec.Push(id)
						if !utf8.ValidString(out) {
							t.Fatalf("Push(%d) gave invalid UTF-8 %q", id, out)
						}
						sb.WriteString(out)
					}
					sb.WriteString(dec.Flush())
					if want := tk.Decode(ids, opt); sb.String() != want {
						t.Errorf("opt %+v: stream %q, Decode %q", opt, sb.String(), want)
					}
				}
			}
			t.Logf("%d tokens held an incomplete character", split)
		})
	}
}

// TestStreamDecoderHoldsBack checks the hold-back on a hand-made sequence:
// "가" (EA B0 80) arriving one byte-token at a time.
func TestStreamDecoderHoldsBack(t *testing.T) {
	tk := byteVocab(t)
	dec := tk.NewDecoder(DecodeOptions{KeepLeadingSpace: true})
	id := func(b byte) int32 { return tk.byteTok[b] }
	steps := []struct {
		id   int32
		want string
	}{
		{id(0xEA), ""},
		{id(0xB0), ""},
		{id(0x80), "가"},
		{id('a'), "a"},
		{id(0xF0), ""}, // start of a 4-byte sequence
		{id(0x9F), ""},
		{id('b'), "\uFFFD\uFFFDb"}, // broken: both bytes become U+FFFD
		{id(0xED), ""},
	}
	for i, s := range steps {
		if got := dec.Push(s.id); got != s.want {
			t.Fatalf("step %d: Push gave %q, want %q", i, got, s.want)
		}
	}
	if got := dec.Flush(); got != "\uFFFD" {
		t.Fatalf("Flush gave %q, want U+FFFD", got)
	}
	if got := dec.Flush(); got != "" {
		t.Fatalf("second Flush gave %q", got)
	}
}
