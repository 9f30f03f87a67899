package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	apiserve "github.com/churon/churon/app/api/serve"
	"github.com/churon/churon/app/api/session"
	"github.com/churon/churon/serve"
)

func init() {
	register("serve", "a local OpenAI-compatible API server over a model (GET /v1/models, POST /v1/chat/completions, /v1/completions)", runServe)
}

func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagsWithHelp("serve", stderr, "Usage:\n  churon serve -m MODEL [--addr 127.0.0.1:8080] [--api-key KEY] [--cors ORIGIN] [--store] [--log]",
		"Serves the model on loopback to OpenAI-compatible clients (base URL http://ADDR/v1). Requests run\n"+
			"together in one batch; a request that extends an earlier one's conversation reuses its KV cache, also\n"+
			"after a restart. Listening on another address needs an API key (--api-key or $CHURON_API_KEY).")
	var mf modelFlags
	mf.register(fs)
	addr := fs.String("addr", apiserve.DefaultAddr, "`host:port` to listen on (port 0: any free one)")
	key := fs.String("api-key", "", "require this `key` (Authorization: Bearer KEY); default $CHURON_API_KEY")
	cors := fs.String("cors", "", "comma-separated web `origins` allowed to call the API from a browser (* for any); none by default")
	storeReqs := fs.Bool("store", false, "keep every chat request in the history, as a conversation")
	logReqs := fs.Bool("log", false, "print a line per request: model, tokens in/out, cached tokens, TTFT, tokens/s")
	maxAnswers := fs.Int("max-answers", 0, "answers generated at once (0: from memory, at most 16)")
	maxTokens := fs.Int("max-tokens", apiserve.DefaultMaxTokens, "the most max_tokens a request may ask for")
	maxConns := fs.Int("max-connections", apiserve.DefaultMaxConnections, "requests in flight at once; more get 429")
	noSnap := fs.Bool("no-snapshots", false, "neither read nor write KV cache snapshots")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("unexpected argument %q", pos[0])
	}
	if err := mf.orDemo(ctx, stderr); err != nil {
		return err
	}
	if *key == "" {
		*key = os.Getenv("CHURON_API_KEY")
	}
	cfg := apiserve.Config{Addr: *addr, APIKey: *key, Store: *storeReqs, Log: *logReqs,
		MaxTokens: *maxTokens, MaxConnections: *maxConns}
	for _, o := range strings.Split(*cors, ",") {
		if o = strings.TrimSpace(o); o != "" {
			cfg.CORSOrigins = append(cfg.CORSOrigins, o)
		}
	}
	if err := serve.Check(cfg); err != nil {
		return usagef("%v", err)
	}
	kv, err := kvType(mf.kv)
	if err != nil {
		return err
	}
	st, m, err := openSession(ctx, &mf, kv, stderr, !*noSnap, *maxAnswers)
	if err != nil {
		return err
	}
	defer st.Close()
	c := &chatter{ctx: ctx, m: m, st: st, stdout: stdout, stderr: stderr}
	loaded := make(chan error, 1)
	go func() { loaded <- c.load(mf.path, true) }()
	var loadErr error
	select {
	case loadErr = <-loaded:
	case <-ctx.Done():
		loadErr = ctx.Err()
	}
	// From here on nobody reads the window's events but this: drain them,
	// reporting what concerns the server.
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		for ev := range m.Events() {
			switch e := ev.(type) {
			case session.Error:
				fmt.Fprintf(stderr, "churon: %s: %v\n", e.Op, e.Err)
			case session.DeviceFallback:
				fmt.Fprintf(stderr, "churon: the accelerator failed; the model runs on the CPU now: %v\n", e.Err)
			}
		}
	}()
	defer func() {
		m.Close()
		<-drained
	}()
	if loadErr != nil {
		return withPath(mf.path, loadErr)
	}
	defaults := serve.DefaultSampling()
	defaults.Context = mf.ctxLen // -c: every request's KV cache
	srv := serve.New(serve.Options{Session: m, LogOutput: stderr, Defaults: &defaults})
	if err := srv.Start(cfg); err != nil {
		return err
	}
	st0 := srv.Status()
	fmt.Fprintf(stderr, "churon: serving %s at %s (Ctrl+C stops)\n", strings.TrimSuffix(filepath.Base(c.model.Path), ".gguf"), st0.URL)
	if cfg.APIKey == "" {
		fmt.Fprintln(stderr, "churon: no API key: any program on this machine may use the model")
	}
	fmt.Fprintln(stdout, st0.URL)
	<-ctx.Done()
	return srv.Stop()
}
