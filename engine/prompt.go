package engine

import (
	"context"
	"fmt"

	"github.com/churon/churon/engine/chat"
	"github.com/churon/churon/engine/tokenizer"
)

// RenderChat formats messages with the model's chat template (or the
// fallback) and returns the prompt text.
func (m *Model) RenderChat(ctx context.Context, msgs []chat.Message, addGenerationPrompt bool) (string, error) {
	return m.RenderChatWith(ctx, msgs, addGenerationPrompt, nil)
}

// RenderChatWith is RenderChat with further template variables (see
// chat.Options.Extra), e.g. "enable_thinking": false for Qwen3.
func (m *Model) RenderChatWith(ctx context.Context, msgs []chat.Message, addGenerationPrompt bool, extra map[string]any) (string, error) {
	tok := m.tok
	opt := chat.Options{AddGenerationPrompt: addGenerationPrompt, Extra: extra}
	if id := tok.BOS(); id >= 0 {
		opt.BOS = tok.Token(id)
	}
	if id := tok.EOS(); id >= 0 {
		opt.EOS = tok.Token(id)
	}
	s, err := m.tmpl.Render(ctx, msgs, opt)
	if err != nil {
		return "", fmt.Errorf("engine: chat template: %w", err)
	}
	return s, nil
}

// TokenizePrompt tokenizes text the way llama.cpp tokenizes a formatted
// chat: special-token text becomes its token, and BOS is added when the
// model asks for it unless the text already starts with it (templates
// often write BOS themselves; a doubled BOS degrades answers).
func (m *Model) TokenizePrompt(text string, addBOS, parseSpecial bool) []int32 {
	tok := m.tok
	ids := tok.Encode(text, tokenizer.EncodeOptions{AddSpecial: addBOS, ParseSpecial: parseSpecial})
	bos := tok.BOS()
	if addBOS && bos >= 0 && len(ids) >= 2 && ids[0] == bos && ids[1] == bos {
		ids = ids[1:]
	}
	return ids
}

// ChatTokens renders messages and tokenizes the result for generation.
func (m *Model) ChatTokens(ctx context.Context, msgs []chat.Message) ([]int32, string, error) {
	return m.ChatTokensWith(ctx, msgs, nil)
}

// ChatTokensWith is ChatTokens with further template variables.
func (m *Model) ChatTokensWith(ctx context.Context, msgs []chat.Message, extra map[string]any) ([]int32, string, error) {
	text, err := m.RenderChatWith(ctx, msgs, true, extra)
	if err != nil {
		return nil, "", err
	}
	return m.TokenizePrompt(text, true, true), text, nil
}
