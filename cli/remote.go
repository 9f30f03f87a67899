package cli

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/churon/churon/app/api/session"
	"github.com/churon/churon/app/remote"
)

func init() {
	register("remote", "remote engines: add, list, rm, test connections to OpenAI-compatible servers", runRemote)
}

// remoteKeyEnv is where `churon remote add` reads a key from when
// neither --key nor --key-stdin is given (so it stays out of the
// shell's history).
const remoteKeyEnv = "CHURON_REMOTE_KEY"

const remoteUsage = `Usage:
  churon remote add NAME URL [--key-stdin | --key KEY] [--model ID]... [--ca-cert FILE] [--replace]
  churon remote list [--json]
  churon remote rm NAME
  churon remote test NAME [--model ID] [--json]
  churon remote models NAME [--json]          ask the server what it serves, and keep the list`

// openRemotes is the person's connections; tests replace it.
var openRemotes = func() *remote.Connections {
	return remote.Open(remote.DefaultPath(), remote.SystemKeyring())
}

func runRemote(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprintln(stderr, remoteUsage)
		if len(args) == 0 {
			return usagef("a subcommand is required: add, list, rm, test or models")
		}
		return flag.ErrHelp
	}
	conns := openRemotes()
	switch args[0] {
	case "add":
		return remoteAdd(ctx, conns, args[1:], stdout, stderr)
	case "list", "ls":
		return remoteList(conns, args[1:], stdout, stderr)
	case "rm", "remove":
		return remoteRemove(conns, args[1:], stdout, stderr)
	case "test":
		return remoteTest(ctx, conns, args[1:], stdout, stderr)
	case "models":
		return remoteModels(ctx, conns, args[1:], stdout, stderr)
	}
	return usagef("unknown subcommand %q: want add, list, rm, test or models", args[0])
}

func remoteAdd(ctx context.Context, conns *remote.Connections, args []string, stdout, stderr io.Writer) error {
	fs := newFlagsWithHelp("remote add", stderr, remoteUsage,
		"Adds an OpenAI-compatible endpoint (llama-server, vLLM, Ollama, LM Studio, churon serve, a cloud API).\n"+
			"URL gets /v1 once if it lacks it. The key is read from --key-stdin, --key or $"+remoteKeyEnv+", and kept in\n"+
			"the system keyring when there is one, else in the connections file (permissions 0600).")
	key := fs.String("key", "", "the API `key` (visible in the shell's history: prefer --key-stdin or $"+remoteKeyEnv+")")
	keyStdin := fs.Bool("key-stdin", false, "read the API key from the first line of stdin")
	var models stringList
	fs.Var(&models, "model", "a model `id` the endpoint serves (repeatable; default: what GET /v1/models lists)")
	ca := fs.String("ca-cert", "", "trust this PEM `file`'s certificate for https (a self-signed server's)")
	replace := fs.Bool("replace", false, "replace a connection of the same name")
	pos, err := parseN(fs, args, 2, "remote add takes NAME and URL")
	if err != nil {
		return err
	}
	k := *key
	switch {
	case *keyStdin:
		line, err := bufio.NewReader(stdin).ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("read the key from stdin: %w", err)
		}
		k = strings.TrimSpace(line)
	case k == "":
		k = os.Getenv(remoteKeyEnv)
	}
	c, err := conns.Add(remote.Connection{Name: pos[0], BaseURL: pos[1], Models: models, CACert: *ca}, k, *replace)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "added %s: %s\n", c.Name, c.BaseURL)
	if c.HasKey {
		fmt.Fprintf(stdout, "the API key is kept in %s\n", c.KeyWhere)
	}
	if len(models) == 0 {
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		ids, err := conns.Refresh(ctx, c.Name)
		if err != nil {
			fmt.Fprintf(stderr, "churon remote add: could not list its models yet: %s\n", message(err))
			return nil
		}
		fmt.Fprintf(stdout, "models: %s\n", strings.Join(ids, ", "))
	}
	return nil
}

type remoteJSON struct {
	Name     string   `json:"name"`
	BaseURL  string   `json:"base_url"`
	Models   []string `json:"models"`
	HasKey   bool     `json:"has_key"`
	KeyWhere string   `json:"key_where,omitempty"`
	CACert   string   `json:"ca_cert,omitempty"`
}

func remoteList(conns *remote.Connections, args []string, stdout, stderr io.Writer) error {
	fs := newFlagsWithHelp("remote list", stderr, remoteUsage, "Lists the connections and the models each serves (as last asked).")
	asJSON := fs.Bool("json", false, "print one JSON object per connection")
	if _, err := parse(fs, args); err != nil {
		return err
	}
	list, err := conns.List()
	if err != nil {
		return err
	}
	for _, c := range list {
		if *asJSON {
			if err := writeJSON(stdout, remoteJSON{Name: c.Name, BaseURL: c.BaseURL, Models: append([]string{}, c.Models...),
				HasKey: c.HasKey, KeyWhere: c.KeyWhere, CACert: c.CACert}); err != nil {
				return err
			}
			continue
		}
		fmt.Fprintf(stdout, "%s\t%s\n", c.Name, c.BaseURL)
		for _, m := range c.Models {
			fmt.Fprintf(stdout, "  remote:%s/%s\n", c.Name, m)
		}
		if c.HasKey {
			fmt.Fprintf(stdout, "  key: in %s\n", c.KeyWhere)
		}
	}
	if len(list) == 0 && !*asJSON {
		fmt.Fprintln(stderr, "no connections (churon remote add NAME URL)")
	}
	return nil
}

func remoteRemove(conns *remote.Connections, args []string, stdout, stderr io.Writer) error {
	fs := newFlagsWithHelp("remote rm", stderr, remoteUsage, "Removes a connection and its key.")
	pos, err := parseN(fs, args, 1, "remote rm takes NAME")
	if err != nil {
		return err
	}
	if err := conns.Remove(pos[0]); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "removed %s\n", pos[0])
	return nil
}

type remoteTestJSON struct {
	Name      string   `json:"name"`
	BaseURL   string   `json:"base_url"`
	Reachable bool     `json:"reachable"`
	LatencyMs float64  `json:"latency_ms"`
	Models    []string `json:"models"`
	Model     string   `json:"model,omitempty"`
	Streaming bool     `json:"streaming"`
	Logprobs  bool     `json:"logprobs"`
	Error     string   `json:"error,omitempty"`
	Note      string   `json:"note,omitempty"`
}

func remoteTest(ctx context.Context, conns *remote.Connections, args []string, stdout, stderr io.Writer) error {
	fs := newFlagsWithHelp("remote test", stderr, remoteUsage,
		"Checks a connection: reachability and latency (GET /v1/models), its models, and whether a streamed\nanswer and logprobs work (one token of the first model, or --model).")
	model := fs.String("model", "", "the model `id` to try (default: the first it lists)")
	asJSON := fs.Bool("json", false, "print one JSON object")
	pos, err := parseN(fs, args, 1, "remote test takes NAME")
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	rep, err := conns.Test(ctx, pos[0], *model)
	out := remoteTestJSON{Name: pos[0], BaseURL: rep.BaseURL, Reachable: err == nil || rep.Models != nil,
		LatencyMs: float64(rep.Latency.Microseconds()) / 1000, Models: append([]string{}, rep.Models...), Model: rep.Model,
		Streaming: rep.Streaming, Logprobs: rep.Logprobs, Note: rep.LogprobsNote}
	if err != nil {
		out.Error = message(err)
	} else if rep.StreamErr != nil {
		out.Error = message(rep.StreamErr)
	}
	if err == nil && len(rep.Models) > 0 {
		_ = conns.SetModels(pos[0], rep.Models)
	}
	if *asJSON {
		if jerr := writeJSON(stdout, out); jerr != nil {
			return jerr
		}
		return err
	}
	if err != nil {
		return err
	}
	yes := map[bool]string{true: "yes", false: "no"}
	fmt.Fprintf(stdout, "%s: %s\nreachable: yes (%.0f ms)\nmodels: %s\n", pos[0], rep.BaseURL, out.LatencyMs, strings.Join(rep.Models, ", "))
	fmt.Fprintf(stdout, "streaming (%s): %s\nlogprobs: %s\n", rep.Model, yes[rep.Streaming], yes[rep.Logprobs])
	if out.Error != "" {
		fmt.Fprintf(stdout, "streaming failed: %s\n", out.Error)
	}
	if rep.LogprobsNote != "" {
		fmt.Fprintf(stdout, "note: %s\n", rep.LogprobsNote)
	}
	return nil
}

func remoteModels(ctx context.Context, conns *remote.Connections, args []string, stdout, stderr io.Writer) error {
	fs := newFlagsWithHelp("remote models", stderr, remoteUsage, "Asks the server what it serves (GET /v1/models) and keeps the list.")
	asJSON := fs.Bool("json", false, "print a JSON array")
	pos, err := parseN(fs, args, 1, "remote models takes NAME")
	if err != nil {
		return err
	}
	ids, err := conns.Refresh(ctx, pos[0])
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(stdout, append([]string{}, ids...))
	}
	for _, id := range ids {
		fmt.Fprintf(stdout, "remote:%s/%s\n", pos[0], id)
	}
	return nil
}

// localOnly refuses a remote model where a command runs the model here
// (generate, bench, tokenize…): its weights, KV cache and memory
// bandwidth are its server's.
func localOnly(path string) error {
	if _, _, ok := session.ParseRemote(path); ok {
		return usagef("%s is a remote model: this command runs models here (their weights, KV cache, memory bandwidth); "+
			"remote models answer in churon chat --remote and churon compare, and churon remote test measures their server", path)
	}
	return nil
}
