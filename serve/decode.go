package serve

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/churon/churon/app/api/session"
)

// limits bound what one request may ask for.
type limits struct {
	messages  int // messages of a chat
	maxTokens int // max_tokens
	defaults  session.Settings
}

// Bounds of the stop strings a request may give.
const (
	maxStops   = 16
	maxStopLen = 256
)

// call is a decoded request: what to ask the session, and how to answer.
type call struct {
	chat   bool
	model  string
	req    session.Request
	stream bool
	usage  bool // stream_options.include_usage
}

// decodeJSON reads body into v, wording what is wrong for the client.
func decodeJSON(body []byte, v any) *apiError {
	if len(bytes.TrimSpace(body)) == 0 {
		return badRequest("", "the request body is empty: send a JSON object")
	}
	if !utf8.Valid(body) {
		return badRequest("", "the request body is not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(v); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.Is(err, io.ErrUnexpectedEOF):
			return badRequest("", "the request body is not valid JSON: it ends too soon")
		case errors.As(err, &se):
			return badRequest("", "the request body is not valid JSON: %v (at byte %d)", se, se.Offset)
		case errors.As(err, &te):
			field := te.Field
			if field == "" {
				return badRequest("", "the request body must be a JSON object, not %s", te.Value)
			}
			return badRequest(field, "%s must be %s, not %s", field, jsonKind(te.Type.String()), te.Value)
		}
		return badRequest("", "the request body cannot be read: %v", err)
	}
	if dec.More() {
		return badRequest("", "the request body holds more than one JSON value")
	}
	return nil
}

// jsonKind names a Go type as JSON would.
func jsonKind(goType string) string {
	t := strings.TrimPrefix(goType, "*")
	switch {
	case t == "string":
		return "a string"
	case t == "bool":
		return "true or false"
	case strings.HasPrefix(t, "int"), strings.HasPrefix(t, "uint"):
		return "an integer"
	case strings.HasPrefix(t, "float"):
		return "a number"
	case strings.HasPrefix(t, "[]"):
		return "an array"
	case strings.HasPrefix(t, "map"), strings.HasPrefix(t, "serve."), strings.HasPrefix(t, "struct"):
		return "an object"
	}
	return t
}

func decodeChat(body []byte, lim limits) (call, *apiError) {
	var r chatRequest
	if e := decodeJSON(body, &r); e != nil {
		return call{}, e
	}
	c := call{chat: true, model: r.Model, stream: r.Stream}
	if r.StreamOptions != nil {
		if !r.Stream {
			return c, badRequest("stream_options", "stream_options is only allowed with stream: true")
		}
		c.usage = r.StreamOptions.IncludeUsage
	}
	if len(r.Messages) == 0 {
		return c, badRequest("messages", "messages is required: at least one message")
	}
	if len(r.Messages) > lim.messages {
		return c, badRequest("messages", "too many messages: %d, at most %d", len(r.Messages), lim.messages)
	}
	for i, m := range r.Messages {
		msg, e := decodeMessage(i, m)
		if e != nil {
			return c, e
		}
		c.req.Messages = append(c.req.Messages, msg)
	}
	if hasValue(r.Tools) || hasValue(r.Functions) {
		return c, badRequest("tools", "tools are not supported: Churon runs no tools")
	}
	if hasValue(r.ToolChoice) && string(bytes.TrimSpace(r.ToolChoice)) != `"none"` {
		return c, badRequest("tool_choice", "tool_choice is not supported: Churon runs no tools")
	}
	if f := r.ResponseFormat; f != nil && f.Type != "" && f.Type != "text" {
		return c, badRequest("response_format", "response_format %q is not supported: only \"text\"", f.Type)
	}
	set, e := decodeSampling(&r.sampling, lim)
	if e != nil {
		return c, e
	}
	mt, param := r.MaxCompletionTokens, "max_completion_tokens"
	if mt == nil {
		mt, param = r.MaxTokens, "max_tokens"
	}
	if set.MaxTokens, e = decodeMaxTokens(mt, param, 0, lim); e != nil {
		return c, e
	}
	c.req.Settings = set
	if r.Logprobs != nil && *r.Logprobs {
		c.req.Logprobs = true
	}
	if r.TopLogprobs != nil {
		n := *r.TopLogprobs
		switch {
		case n < 0 || n > 20:
			return c, badRequest("top_logprobs", "top_logprobs must be between 0 and 20, not %d", n)
		case n > 0 && !c.req.Logprobs:
			return c, badRequest("top_logprobs", "top_logprobs needs logprobs: true")
		}
		c.req.TopLogprobs = n
	}
	if hasValue(r.Conversation) {
		id, e := decodeConversation(r.Conversation)
		if e != nil {
			return c, e
		}
		c.req.Conversation = id
	}
	return c, nil
}

func decodeCompletion(body []byte, lim limits) (call, *apiError) {
	var r completionRequest
	if e := decodeJSON(body, &r); e != nil {
		return call{}, e
	}
	c := call{model: r.Model, stream: r.Stream}
	if r.StreamOptions != nil {
		if !r.Stream {
			return c, badRequest("stream_options", "stream_options is only allowed with stream: true")
		}
		c.usage = r.StreamOptions.IncludeUsage
	}
	prompt, e := decodePrompt(r.Prompt)
	if e != nil {
		return c, e
	}
	c.req.Prompt = prompt
	switch {
	case r.Echo:
		return c, badRequest("echo", "echo is not supported")
	case hasValue(r.Suffix):
		return c, badRequest("suffix", "suffix is not supported")
	case r.BestOf != nil && *r.BestOf != 1:
		return c, badRequest("best_of", "best_of must be 1")
	}
	set, e := decodeSampling(&r.sampling, lim)
	if e != nil {
		return c, e
	}
	// The legacy API's default: 16 tokens.
	if set.MaxTokens, e = decodeMaxTokens(r.MaxTokens, "max_tokens", 16, lim); e != nil {
		return c, e
	}
	c.req.Settings = set
	if r.Logprobs != nil {
		n := *r.Logprobs
		if n < 0 || n > 5 {
			return c, badRequest("logprobs", "logprobs must be between 0 and 5, not %d", n)
		}
		c.req.Logprobs, c.req.TopLogprobs = true, n
	}
	return c, nil
}

// hasValue reports whether a raw field is present and not null.
func hasValue(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && string(t) != "null" && string(t) != "[]"
}

func decodeMessage(i int, m chatMessage) (session.RequestMessage, *apiError) {
	param := fmt.Sprintf("messages[%d]", i)
	role := m.Role
	switch role {
	case "system", "user", "assistant":
	case "developer": // OpenAI's newer name for the system message
		role = "system"
	case "tool", "function":
		return session.RequestMessage{}, badRequest(param+".role", "%s: %s messages are not supported: Churon runs no tools", param, role)
	case "":
		return session.RequestMessage{}, badRequest(param+".role", "%s has no role: want system, user or assistant", param)
	default:
		return session.RequestMessage{}, badRequest(param+".role", "%s has role %q: want system, user or assistant", param, role)
	}
	content, e := decodeContent(param, m.Content, role == "assistant")
	if e != nil {
		return session.RequestMessage{}, e
	}
	return session.RequestMessage{Role: role, Content: content}, nil
}

// decodeContent reads a message's content: a string or an array of text
// parts (joined by newlines); null only for an assistant's message.
func decodeContent(param string, raw json.RawMessage, nullOK bool) (string, *apiError) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || string(t) == "null" {
		if nullOK {
			return "", nil
		}
		return "", badRequest(param+".content", "%s has no content", param)
	}
	switch t[0] {
	case '"':
		var s string
		if err := json.Unmarshal(t, &s); err != nil {
			return "", badRequest(param+".content", "%s.content is not a valid string", param)
		}
		return s, nil
	case '[':
		var parts []contentPart
		if err := json.Unmarshal(t, &parts); err != nil {
			return "", badRequest(param+".content", "%s.content must be a string or an array of {\"type\": \"text\", \"text\": ...} parts", param)
		}
		texts := make([]string, 0, len(parts))
		for j, p := range parts {
			if p.Type != "text" {
				return "", badRequest(fmt.Sprintf("%s.content[%d]", param, j), "%s.content[%d] is of type %q: only text is supported", param, j, p.Type)
			}
			texts = append(texts, p.Text)
		}
		return strings.Join(texts, "\n"), nil
	}
	return "", badRequest(param+".content", "%s.content must be a string or an array of text parts", param)
}

// decodePrompt reads a completion's prompt: a string, or an array of one.
func decodePrompt(raw json.RawMessage) (string, *apiError) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || string(t) == "null" {
		return "", badRequest("prompt", "prompt is required")
	}
	var s string
	if t[0] == '"' {
		if err := json.Unmarshal(t, &s); err != nil {
			return "", badRequest("prompt", "prompt is not a valid string")
		}
	} else {
		var list []string
		if err := json.Unmarshal(t, &list); err != nil {
			return "", badRequest("prompt", "prompt must be a string (token ids are not supported)")
		}
		if len(list) != 1 {
			return "", badRequest("prompt", "prompt must be one string; %d prompts were given (send them as separate requests: they run together)", len(list))
		}
		s = list[0]
	}
	if s == "" {
		return "", badRequest("prompt", "prompt is empty")
	}
	return s, nil
}

func decodeConversation(raw json.RawMessage) (int64, *apiError) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return 0, badRequest("conversation", "conversation must be a conversation's id")
	}
	var id int64
	switch x := v.(type) {
	case float64:
		if x != math.Trunc(x) || x < 1 || x > 1<<53 {
			return 0, badRequest("conversation", "conversation must be a positive integer id, not %v", x)
		}
		id = int64(x)
	case string:
		n, err := strconv.ParseInt(strings.TrimSpace(x), 10, 64)
		if err != nil || n < 1 {
			return 0, badRequest("conversation", "conversation must be a conversation's id, not %q", x)
		}
		id = n
	default:
		return 0, badRequest("conversation", "conversation must be a conversation's id")
	}
	return id, nil
}

func decodeMaxTokens(v *int, param string, def int, lim limits) (int, *apiError) {
	if v == nil {
		return def, nil
	}
	n := *v
	switch {
	case n < 1:
		return 0, badRequest(param, "%s must be at least 1, not %d", param, n)
	case n > lim.maxTokens:
		return 0, badRequest(param, "%s %d is more than this server allows (%d)", param, n, lim.maxTokens)
	}
	return n, nil
}

// decodeSampling turns the sampling fields into session settings over the
// server's defaults (llama-server's: temperature 0.8, top-k 40, top-p
// 0.95, min-p 0.05, no penalties), checking each range.
func decodeSampling(s *sampling, lim limits) (session.Settings, *apiError) {
	set := lim.defaults
	set.Stop = nil
	num := func(p *float64, param string, lo, hi float64, dst *float32) *apiError {
		if p == nil {
			return nil
		}
		if math.IsNaN(*p) || *p < lo || *p > hi {
			return badRequest(param, "%s must be between %g and %g, not %g", param, lo, hi, *p)
		}
		*dst = float32(*p)
		return nil
	}
	for _, f := range []struct {
		p      *float64
		param  string
		lo, hi float64
		dst    *float32
	}{
		{s.Temperature, "temperature", 0, 2, &set.Temperature},
		{s.TopP, "top_p", 0, 1, &set.TopP},
		{s.MinP, "min_p", 0, 1, &set.MinP},
		{s.PresencePenalty, "presence_penalty", -2, 2, &set.PresencePenalty},
		{s.FrequencyPenalty, "frequency_penalty", -2, 2, &set.FrequencyPenalty},
		{s.RepeatPenalty, "repeat_penalty", 0.01, 10, &set.RepeatPenalty},
	} {
		if e := num(f.p, f.param, f.lo, f.hi, f.dst); e != nil {
			return set, e
		}
	}
	if set.TopP == 0 { // OpenAI's top_p 0: only the most likely token
		set.TopP, set.Temperature = 1, 0
	}
	if s.TopK != nil {
		if *s.TopK < 0 {
			return set, badRequest("top_k", "top_k must be 0 (off) or more, not %d", *s.TopK)
		}
		set.TopK = *s.TopK
	}
	set.Seed = -1
	if s.Seed != nil {
		if *s.Seed < -1 {
			return set, badRequest("seed", "seed must be -1 (random) or a seed of 0 or more, not %d", *s.Seed)
		}
		set.Seed = *s.Seed
	}
	if s.N != nil && *s.N != 1 {
		return set, badRequest("n", "n must be 1: send several requests instead (they run together)")
	}
	if len(s.LogitBias) > 0 {
		return set, badRequest("logit_bias", "logit_bias is not supported")
	}
	stops, e := decodeStop(s.Stop)
	if e != nil {
		return set, e
	}
	set.Stop = stops
	return set, nil
}

func decodeStop(raw json.RawMessage) ([]string, *apiError) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || string(t) == "null" {
		return nil, nil
	}
	var stops []string
	if t[0] == '"' {
		var s string
		if err := json.Unmarshal(t, &s); err != nil {
			return nil, badRequest("stop", "stop is not a valid string")
		}
		stops = []string{s}
	} else if err := json.Unmarshal(t, &stops); err != nil {
		return nil, badRequest("stop", "stop must be a string or an array of strings")
	}
	if len(stops) > maxStops {
		return nil, badRequest("stop", "too many stop strings: %d, at most %d", len(stops), maxStops)
	}
	for i, s := range stops {
		if s == "" {
			return nil, badRequest("stop", "stop string %d is empty", i)
		}
		if len(s) > maxStopLen {
			return nil, badRequest("stop", "stop string %d is %d bytes long, at most %d", i, len(s), maxStopLen)
		}
	}
	return stops, nil
}
