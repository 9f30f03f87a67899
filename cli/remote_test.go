package cli

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/churon/churon/app/remote"
	"github.com/churon/churon/assets/demo"
	"github.com/churon/churon/internal/remotetest"
)

// TestRemoteChat is the issue's first demonstration: `churon remote add
// local URL` against a running `churon serve` (with a key), then `churon
// chat --remote local/MODEL --new --message … --json` answers and stores
// the conversation; the export says which connection and model answered,
// and the key is in no output, export or error.
func TestRemoteChat(t *testing.T) {
	home := t.TempDir()
	t.Setenv("CHURON_HOME", home)
	t.Setenv("CHURON_KEYRING", "off")
	t.Setenv(remoteKeyEnv, remotetest.Key)
	srv := remotetest.Serve(t, remotetest.Key)

	var outputs []string
	out, stderr := runOK(t, "remote", "add", "local", strings.TrimPrefix(srv.Base, "http://"))
	outputs = append(outputs, out, stderr)
	if !strings.Contains(out, "models: "+srv.Model) || !strings.Contains(out, "permissions 0600") {
		t.Errorf("remote add said %q", out)
	}
	var list remoteJSON
	outputs = append(outputs, runJSON(t, &list, "remote", "list", "--json"))
	if list.Name != "local" || list.BaseURL != srv.Base+"/v1" || !list.HasKey || len(list.Models) != 1 {
		t.Errorf("remote list: %+v", list)
	}
	var rep remoteTestJSON
	outputs = append(outputs, runJSON(t, &rep, "remote", "test", "local", "--json"))
	if !rep.Reachable || !rep.Streaming || !rep.Logprobs || rep.Model != srv.Model {
		t.Errorf("remote test: %+v", rep)
	}

	var ans chatJSON
	outputs = append(outputs, runJSON(t, &ans, "chat", "--remote", "local/"+srv.Model, "--new", "--message", "Once upon a time", "-n", "24", "--json"))
	if ans.Text == "" || ans.Model != "remote:local/"+srv.Model || ans.ConversationID == 0 || ans.GenTokens == 0 || ans.Error != "" {
		t.Fatalf("chat: %+v", ans)
	}
	exp, _ := runOK(t, "export", "--conversation", strconv.FormatInt(ans.ConversationID, 10), "--format", "json", "-o", "-")
	if !strings.Contains(exp, "remote:local/"+srv.Model) {
		t.Errorf("the export does not name the connection and model:\n%s", exp)
	}
	outputs = append(outputs, exp)

	// Compare across engines: the demo model's file here, served there.
	local := filepath.Join(t.TempDir(), "stories260K.gguf")
	if err := os.WriteFile(local, demo.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	cmp, cerr := runOK(t, "compare", "-m", local, "-m", "remote:local/"+srv.Model, "-p", "Once upon a time", "-n", "16")
	outputs = append(outputs, cmp, cerr)
	for _, want := range []string{"TTFT ms", "gen tok/s", "KLD (est.)", "ref  remote:local/" + srv.Model, "estimated from 5 alternatives", "estimated from the 5 most likely tokens"} {
		if !strings.Contains(cmp, want) {
			t.Errorf("compare lacks %q:\n%s", want, cmp)
		}
	}

	// A wrong key: one clear line, exit 1, the person's message stored.
	runOK(t, "remote", "add", "wrong", srv.Base, "--key", "sk-not-the-key-0000000000", "--model", srv.Model)
	var bad chatJSON
	o, e, code := run(t, "chat", "--remote", "wrong/"+srv.Model, "--new", "--message", "hi", "--json")
	outputs = append(outputs, o, e)
	decodeJSON(t, "chat with a wrong key", []byte(o), &bad)
	if code != 1 || bad.FinishReason != "error" || !strings.Contains(bad.Error, "refused the API key (401)") || !strings.Contains(e, "check the API key") {
		t.Errorf("a wrong key: exit %d, %+v, stderr %q", code, bad, e)
	}
	runOK(t, "remote", "rm", "wrong")
	for _, s := range outputs {
		if strings.Contains(s, remotetest.Key) {
			t.Errorf("the key is in the output: %q", s)
		}
	}
	b, err := os.ReadFile(filepath.Join(home, "config", remote.FileName))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "sk-not-the-key") {
		t.Error("the removed connection's key stayed in the file")
	}
	wantUsageErrors(t, [][]string{
		{"remote"}, {"remote", "add", "only-a-name"}, {"remote", "frob"},
		{"chat", "--remote", "no-model", "--message", "x"},
		{"bench", "-m", "remote:local/" + srv.Model}, {"generate", "-m", "remote:local/" + srv.Model, "-p", "x"}, {"chat", "--remote", "a/b", "-m", "x.gguf", "--message", "x"},
	})
}
