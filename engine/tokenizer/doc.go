// Package tokenizer turns text into token ids and back for GGUF models,
// giving exactly the ids llama.cpp gives for the same vocabulary.
//
// Two tokenizer models are supported, chosen by tokenizer.ggml.model:
// "llama" (SentencePiece: score-ordered merges, byte fallback, the ▁ space
// marker and the optional leading space) and "gpt2" (byte-level BPE:
// a pre-tokenizer named by tokenizer.ggml.pre splits the text into words,
// then merges run by rank). The pre-tokenizers are written by hand over
// code points and Unicode categories, reproducing llama.cpp's regular
// expressions (Go's regexp has no lookahead): llama3/llama-bpe, qwen2,
// gpt-2, mpt, default, falcon, starcoder, refact, deepseek-llm,
// deepseek-coder and several aliases.
//
// A Tokenizer is immutable and safe for concurrent use:
//
//	f, err := gguf.Open(path)
//	...
//	tok, err := tokenizer.FromGGUF(f)
//	...
//	ids := tok.Encode(prompt, tokenizer.EncodeOptions{AddSpecial: true, ParseSpecial: true})
//
// ParseSpecial is for text the program builds (a rendered chat template);
// text a person typed should be encoded without it, so that "<|im_end|>"
// typed by a user stays plain text. As in llama.cpp, user-defined tokens
// (such as Qwen's "<think>") are recognised either way.
//
// For output, a StreamDecoder emits only whole UTF-8 characters, holding
// back the bytes of a character that is split across tokens:
//
//	dec := tok.NewDecoder(tokenizer.DecodeOptions{KeepLeadingSpace: true})
//	for _, id := range generated {
//		fmt.Print(dec.Push(id))
//	}
//	fmt.Print(dec.Flush())
//
// A StreamDecoder belongs to one stream and is not safe for concurrent use.
package tokenizer
