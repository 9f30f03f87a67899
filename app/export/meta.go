package export

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/churon/churon/app/store"
)

// headerItem is one line of what every format shows under a chat's
// title.
type headerItem struct{ label, value string }

// headerItems are the chat's dates, models and message count, in the
// order they are shown, leaving out those it does not have.
func headerItems(chat Chat, opt Options) []headerItem {
	c := chat.Conversation
	items := []headerItem{
		{"Created", showTime(c.Created, opt)},
		{"Updated", showTime(c.Updated, opt)},
		{"Model", strings.Join(modelNames(chat), ", ")},
		{"Messages", fmt.Sprint(len(chat.Messages))},
	}
	return slices.DeleteFunc(items, func(it headerItem) bool { return it.value == "" })
}

// footer is the metadata line under an answer: its statistics and the
// sampler settings it was generated with.
type footer struct {
	Stats   []string // "312 tokens", "first token 210 ms", …
	Sampler []string // "temperature 0.8", "top-k 40", …
}

func (f footer) empty() bool { return len(f.Stats) == 0 && len(f.Sampler) == 0 }

// String is the footer on one line.
func (f footer) String() string {
	parts := slices.Clone(f.Stats)
	if len(f.Sampler) > 0 {
		parts = append(parts, strings.Join(f.Sampler, ", "))
	}
	return strings.Join(parts, " · ")
}

func footerOf(m store.Message) footer {
	var f footer
	if m.Role != store.RoleAssistant {
		return f
	}
	if m.GenTokens > 0 {
		f.Stats = append(f.Stats, fmt.Sprintf("%d tokens", m.GenTokens))
	}
	if m.TTFT > 0 {
		f.Stats = append(f.Stats, "first token "+duration(m.TTFT))
	}
	if m.GenTPS > 0 {
		f.Stats = append(f.Stats, fmt.Sprintf("%.1f tok/s", m.GenTPS))
	}
	if m.PromptTokens > 0 {
		s := fmt.Sprintf("prompt %d tokens", m.PromptTokens)
		if m.PromptTPS > 0 {
			s += fmt.Sprintf(" at %.1f tok/s", m.PromptTPS)
		}
		f.Stats = append(f.Stats, s)
	}
	f.Stats = append(f.Stats, finishText(m.FinishReason))
	f.Sampler = samplerText(m.Sampler)
	return f
}

// finishText says why an answer ended, in words (the reasons app/session
// writes; others are shown as they are).
func finishText(reason string) string {
	switch reason {
	case "eos", "stop":
		return "finished (" + reason + ")"
	case "length", "context":
		return "cut off at the length limit (" + reason + ")"
	case "cancelled":
		return "stopped by the user"
	case "error":
		return "failed"
	case "":
		return "unfinished"
	}
	return "ended: " + reason
}

func duration(d time.Duration) string {
	if d < time.Second {
		return fmt.Sprintf("%d ms", d.Milliseconds())
	}
	return fmt.Sprintf("%.2f s", d.Seconds())
}

// samplerKeys are app/session's settings fields in the order they are
// shown, with their names for people. Fields not listed follow, sorted.
var samplerKeys = []struct{ key, label string }{
	{"temperature", "temperature"},
	{"top_k", "top-k"},
	{"top_p", "top-p"},
	{"min_p", "min-p"},
	{"repeat_penalty", "repeat penalty"},
	{"repeat_last_n", "repeat window"},
	{"presence_penalty", "presence penalty"},
	{"frequency_penalty", "frequency penalty"},
	{"seed", "seed"},
	{"max_tokens", "max tokens"},
	{"context", "context"},
	{"stop", "stop"},
}

// samplerOff are settings whose zero value means "not used": not worth a
// word in the footer.
var samplerOff = map[string]bool{"presence_penalty": true, "frequency_penalty": true, "max_tokens": true, "context": true}

// samplerText formats stored sampler settings (JSON); text that is not a
// JSON object yields nothing.
func samplerText(js string) []string {
	if strings.TrimSpace(js) == "" {
		return nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(js), &m); err != nil {
		return nil
	}
	var out []string
	add := func(key, label string) {
		v, ok := m[key]
		if !ok {
			return
		}
		delete(m, key)
		s := strings.TrimSpace(string(v))
		if s == "null" || s == "[]" || s == `""` || (samplerOff[key] && s == "0") {
			return
		}
		var buf bytes.Buffer
		if json.Compact(&buf, v) == nil {
			s = buf.String()
		}
		out = append(out, label+" "+s)
	}
	// The session's record of which prompt tokens an answer came from,
	// kept for its KV cache: nothing a reader of the chat needs.
	delete(m, "prompt_fingerprint")
	for _, k := range samplerKeys {
		add(k.key, k.label)
	}
	// The other keys, sorted: collected by hand into a slice of the
	// right size, as this runs for every answer exported
	// (slices.Sorted(maps.Keys(m)) makes five allocations more).
	rest := make([]string, 0, len(m))
	for k := range m {
		rest = append(rest, k)
	}
	slices.Sort(rest)
	for _, k := range rest {
		add(k, k)
	}
	return out
}
