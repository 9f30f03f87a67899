package cli

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	apicompare "github.com/churon/churon/app/api/compare"
	"github.com/churon/churon/app/compare"
	"github.com/churon/churon/app/paths"
	"github.com/churon/churon/app/session"
	"github.com/churon/churon/internal/testdata"
)

// helpDefaults reads the "(default X)" of each flag from a command's -h.
func helpDefaults(t *testing.T, cmd string) map[string]string {
	t.Helper()
	_, help, code := run(t, cmd, "-h")
	if code != 0 {
		t.Fatalf("%s -h: exit %d", cmd, code)
	}
	out := map[string]string{}
	flagLine := regexp.MustCompile(`^\s+-(\S+)`)
	def := regexp.MustCompile(`\(default ([^)]*)\)\s*$`)
	name := ""
	for _, l := range strings.Split(help, "\n") {
		if m := flagLine.FindStringSubmatch(l); m != nil {
			name = m[1]
		}
		if m := def.FindStringSubmatch(l); m != nil && name != "" {
			out[name] = m[1]
		}
	}
	return out
}

func g32(v float32) string { return strconv.FormatFloat(float64(v), 'g', -1, 32) }
func g64(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// TestSamplingDefaultsAreTheWindows checks the defaults each command
// prints, and so uses, against the services the window reads: chat's
// against the session's (the chat window), generate's and compare's
// against the comparison's (the compare page). Floats must print as
// written, "0.8" and not "0.800000011920929".
func TestSamplingDefaultsAreTheWindows(t *testing.T) {
	chat := session.DefaultSettings()
	gen := compare.DefaultSampling()
	cases := []struct {
		cmd  string
		want map[string]string
	}{
		{"chat", map[string]string{"n": "256", "temp": g32(chat.Temperature), "top-k": fmt.Sprint(chat.TopK), "top-p": g32(chat.TopP),
			"min-p": g32(chat.MinP), "repeat-penalty": g32(chat.RepeatPenalty), "repeat-last-n": fmt.Sprint(chat.RepeatLastN), "seed": fmt.Sprint(chat.Seed)}},
		{"generate", map[string]string{"n": fmt.Sprint(gen.MaxTokens), "temp": g64(gen.Temperature), "top-k": fmt.Sprint(gen.TopK), "top-p": g64(gen.TopP),
			"min-p": g64(gen.MinP), "repeat-penalty": g64(gen.RepeatPenalty), "repeat-last-n": fmt.Sprint(gen.PenaltyWindow), "seed": "-1"}},
		// The Compare page's fields.
		{"compare", map[string]string{"n": fmt.Sprint(apicompare.PageMaxTokens), "temp": g64(apicompare.PageTemperature), "seed": fmt.Sprint(apicompare.PageSeed),
			"top-p": g64(gen.TopP), "repeat-penalty": g64(gen.RepeatPenalty)}},
	}
	long := regexp.MustCompile(`\.\d{7,}`)
	for _, c := range cases {
		got := helpDefaults(t, c.cmd)
		for name, want := range c.want {
			// The flag package leaves out a default that is the zero value.
			if want == "0" && got[name] == "" {
				continue
			}
			if got[name] != want {
				t.Errorf("churon %s -%s: default %q; the window's is %q", c.cmd, name, got[name], want)
			}
		}
		for name, v := range got {
			if long.MatchString(v) {
				t.Errorf("churon %s -%s: default printed as %s", c.cmd, name, v)
			}
		}
	}
	// The repeat penalty is the one number the issue saw drift: the
	// chat window's and churon chat's must be one.
	if got := helpDefaults(t, "chat")["repeat-penalty"]; got != g32(chat.RepeatPenalty) {
		t.Errorf("churon chat --repeat-penalty defaults to %s, the window's chat to %s", got, g32(chat.RepeatPenalty))
	}
}

// TestChatCapsAnswersAtTheDocumentedN: without -n a new conversation's
// answer stops at 256 tokens, as -h says, instead of running to the end
// of the context; a conversation continued keeps the cap it was given.
func TestChatCapsAnswersAtTheDocumentedN(t *testing.T) {
	model := testdata.Stories260K(t)
	t.Setenv(paths.EnvHome, t.TempDir())
	first := chatTurn(t, "-m", model, "--new", "--message", "Once upon a time", "--json", "--temp", "0", "-t", "1", "--no-snapshots")
	if first.GenTokens > 256 || first.FinishReason == "context" {
		t.Fatalf("answer of %d tokens, finished by %q; want at most 256", first.GenTokens, first.FinishReason)
	}
	set, err := openHome(t).Conversation(t.Context(), first.ConversationID)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(set.Sampler, `"max_tokens":256`) {
		t.Errorf("the new conversation's settings %s; want max_tokens 256", set.Sampler)
	}
	second := chatTurn(t, "-m", model, "--conversation", fmt.Sprint(first.ConversationID), "--message", "More", "--json", "-n", "5", "-t", "1", "--no-snapshots")
	if second.GenTokens > 5 {
		t.Errorf("continued with -n 5: %d tokens", second.GenTokens)
	}
}
