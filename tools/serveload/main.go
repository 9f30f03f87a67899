// Command serveload measures `churon serve` under load, on loopback, in
// one bounded run: 1, 2, 4 and 8 concurrent clients each streaming a
// 128-token answer (aggregate tokens/s, TTFT p50/p95 per level); a
// 2,000-token prompt arriving while three others decode (their
// inter-token p95 with and without it); a continuing request's cached
// tokens and TTFT against a cold one's, before and after a restart; and
// greedy answers of four concurrent requests against the same four one at
// a time. It runs the session and the server in this process, over a
// temporary store and KV folder, on the synthetic qwen2.5-0.5b Q4_0 shape
// (written once into the cache folder) unless --model names a file.
//
//	go run ./tools/serveload [--model FILE] [--clients 1,2,4,8] [--tokens 128] [--json FILE]
//
// It prints the load average beside the figures: on a shared machine they
// are noisy, and the thresholds it checks (4 clients ≥ 2.5× one, 8 ≥ 3.5×,
// the long prompt raising the others' inter-token p95 by at most 2×) are
// for a quiet one.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/churon/churon/app/api/openai"
	apiserve "github.com/churon/churon/app/api/serve"
	api "github.com/churon/churon/app/api/session"
	"github.com/churon/churon/app/kvcache"
	"github.com/churon/churon/app/session"
	"github.com/churon/churon/app/store"
	"github.com/churon/churon/internal/percentile"
	"github.com/churon/churon/models/synth"
	"github.com/churon/churon/serve"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "serveload:", err)
		os.Exit(1)
	}
}

type options struct {
	model    string
	clients  []int
	tokens   int
	threads  int
	long     int
	limit    time.Duration
	jsonOut  string
	prefill  int
	skipLong bool
	rounds   int
}

func run() error {
	var o options
	clients := flag.String("clients", "1,2,4,8", "concurrent clients of each level")
	flag.StringVar(&o.model, "model", "", "GGUF `file` to serve (default: synthetic qwen2.5-0.5b Q4_0, made once in the cache)")
	flag.IntVar(&o.tokens, "tokens", 128, "tokens each client asks for")
	flag.IntVar(&o.rounds, "rounds", 3, "rounds of the levels, interleaved; each level's figure is its median")
	flag.IntVar(&o.threads, "t", 0, "CPU threads (0: all)")
	flag.IntVar(&o.long, "long", 2000, "tokens of the long prompt that arrives while three answers decode")
	flag.DurationVar(&o.limit, "limit", 20*time.Minute, "stop after this long, whatever is left")
	flag.StringVar(&o.jsonOut, "json", "", "also write the figures to this `file` as JSON")
	flag.IntVar(&o.prefill, "prefill", 0, "prompt tokens a step feeds beside decode rows (0: chosen by the batch)")
	flag.BoolVar(&o.skipLong, "skip-long", false, "skip the long-prompt measurement")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the run to `file`")
	flag.Parse()
	if o.rounds < 1 {
		return fmt.Errorf("--rounds %d: want at least 1", o.rounds)
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	for _, f := range strings.Split(*clients, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > 64 {
			return fmt.Errorf("--clients %q: want numbers 1 to 64", *clients)
		}
		o.clients = append(o.clients, n)
	}
	if o.model == "" {
		p, err := synthModel()
		if err != nil {
			return err
		}
		o.model = p
	}
	ctx, cancel := context.WithTimeout(context.Background(), o.limit)
	defer cancel()
	rep := report{Model: filepath.Base(o.model), Tokens: o.tokens, LoadStart: loadavg()}
	tmp, err := os.MkdirTemp("", "serveload-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	h, err := start(ctx, o, tmp)
	if err != nil {
		return err
	}
	fmt.Printf("serveload: %s on %s, load average %s\n", rep.Model, h.backend, rep.LoadStart)
	// Warm-up: pages the weights in, sizes the scratch buffers.
	if _, err := h.stream(ctx, prompt(0, 16), 8); err != nil {
		return err
	}
	// Rounds of every level, interleaved (1 2 4 8 1 2 4 8 …), each level's
	// figure the median of its rounds: on a shared machine one round of
	// a level can land in a quiet second and the next in a busy one. Each
	// round asks new prompts, so none reuses another's cache.
	runs := map[int][]level{}
	for r := range o.rounds {
		for _, n := range o.clients {
			lv, err := h.level(ctx, n, o.tokens, r)
			if err != nil {
				return err
			}
			runs[n] = append(runs[n], lv)
			fmt.Printf("  round %d, %d client(s): %6.1f tok/s aggregate (%d tokens in %.1f s), TTFT p50 %4.0f ms p95 %4.0f ms, inter-token p95 %4.0f ms  [load %s]\n",
				r+1, n, lv.Aggregate, lv.Tokens, lv.Wall.Seconds(), ms(lv.TTFT50), ms(lv.TTFT95), ms(lv.ITL95), loadavg())
			fmt.Printf("           forward passes %.0f%% of the wall time: %d prompt tokens in %.1f s, decode-only steps %.1f tok/s\n",
				100*lv.Steps.PassShare, lv.Steps.PromptTokens, lv.Steps.PromptSecs, lv.Steps.DecodeRate)
		}
	}
	for _, n := range o.clients {
		rep.Levels = append(rep.Levels, median(runs[n]))
	}
	if len(rep.Levels) > 0 {
		base, baseCPU := rep.Levels[0].Aggregate, rep.Levels[0].PerCPU
		for i := range rep.Levels {
			rep.Levels[i].Speedup = rep.Levels[i].Aggregate / base
			if baseCPU > 0 {
				rep.Levels[i].CPUSpeedup = rep.Levels[i].PerCPU / baseCPU
			}
		}
	}
	for _, lv := range rep.Levels {
		fmt.Printf("  %d client(s), median of %d: %6.1f tok/s aggregate (×%.2f), TTFT p50 %4.0f ms p95 %4.0f ms; %.1f tokens per CPU-second (×%.2f)\n",
			lv.Clients, o.rounds, lv.Aggregate, lv.Speedup, ms(lv.TTFT50), ms(lv.TTFT95), lv.PerCPU, lv.CPUSpeedup)
	}
	if !o.skipLong {
		lp, err := h.longPrompt(ctx, o.tokens, o.long)
		if err != nil {
			return err
		}
		rep.Long = &lp
		fmt.Printf("  a %d-token prompt while 3 decode: their inter-token p95 %0.f ms → %.0f ms (×%.2f), the prompt's TTFT %.1f s, chunks of %d–%d tokens  [load %s]\n",
			lp.PromptTokens, ms(lp.Base95), ms(lp.With95), lp.Ratio, lp.LongTTFT.Seconds(), lp.ChunkMin, lp.ChunkMax, loadavg())
	}
	cont, err := h.continuing(ctx, o, tmp)
	if err != nil {
		return err
	}
	rep.Continue = cont
	fmt.Printf("  continuing a conversation: cold TTFT %.0f ms; follow-up cached %d of %d, TTFT %.0f ms; after a restart cached %d of %d, TTFT %.0f ms (cold of that size %.0f ms)\n",
		ms(cont.ColdTTFT), cont.Cached, cont.Prompt, ms(cont.WarmTTFT), cont.RestartCached, cont.RestartPrompt, ms(cont.RestartTTFT), ms(cont.RestartColdTTFT))
	h = cont.h
	same, err := h.greedySame(ctx)
	if err != nil {
		return err
	}
	rep.GreedySame = same
	fmt.Printf("  greedy: 4 concurrent answers equal the same 4 one at a time: %v\n", same)
	h.close()
	rep.LoadEnd = loadavg()
	rep.Checks = checks(rep)
	for _, c := range rep.Checks {
		fmt.Printf("  %-4s %s\n", map[bool]string{true: "ok", false: "MISS"}[c.OK], c.What)
	}
	fmt.Printf("serveload: load average at the end %s (noisy on a shared machine: re-measure on a quiet one)\n", rep.LoadEnd)
	if o.jsonOut != "" {
		b, _ := json.MarshalIndent(rep, "", "  ")
		if err := os.WriteFile(o.jsonOut, b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

type report struct {
	Model      string
	Tokens     int
	LoadStart  string
	LoadEnd    string
	Levels     []level
	Long       *longFigure
	Continue   contFigure
	GreedySame bool
	Checks     []check
}

type level struct {
	Clients   int
	Tokens    int
	Wall      time.Duration
	Aggregate float64 // tokens/s, all clients together
	Speedup   float64 // against one client
	// PerCPU is tokens per CPU-second of this process (user + system):
	// on a machine others load, nearer to what batching saves than the
	// wall clock, which counts the time the CPU went to them.
	PerCPU, CPUSpeedup float64
	TTFT50, TTFT95     time.Duration
	ITL95              time.Duration // inter-token p95 over all clients
	Steps              stepFigures   // where the wall time went
}

type longFigure struct {
	PromptTokens       int
	Base95, With95     time.Duration
	Ratio              float64
	LongTTFT           time.Duration
	ChunkMin, ChunkMax int
}

type contFigure struct {
	Prompt, Cached               int
	ColdTTFT, WarmTTFT           time.Duration
	RestartPrompt, RestartCached int
	RestartTTFT, RestartColdTTFT time.Duration
	h                            *harness
}

type check struct {
	What string
	OK   bool
}

func checks(r report) []check {
	var out []check
	for _, lv := range r.Levels {
		switch lv.Clients {
		case 4:
			out = append(out, check{fmt.Sprintf("4 clients ×%.2f one client's aggregate (want ≥ 2.5)", lv.Speedup), lv.Speedup >= 2.5})
		case 8:
			out = append(out, check{fmt.Sprintf("8 clients ×%.2f one client's aggregate (want ≥ 3.5)", lv.Speedup), lv.Speedup >= 3.5})
		}
	}
	if r.Long != nil {
		out = append(out, check{fmt.Sprintf("the long prompt raises the others' inter-token p95 ×%.2f (want ≤ 2)", r.Long.Ratio), r.Long.Ratio <= 2})
	}
	c := r.Continue
	out = append(out,
		check{fmt.Sprintf("a continuing request reuses %d cached tokens and is faster to its first token (%.0f ms against %.0f ms cold)", c.Cached, ms(c.WarmTTFT), ms(c.ColdTTFT)), c.Cached > 0 && c.WarmTTFT < c.ColdTTFT},
		check{fmt.Sprintf("after a restart it reuses %d and is faster (%.0f ms against %.0f ms cold)", c.RestartCached, ms(c.RestartTTFT), ms(c.RestartColdTTFT)), c.RestartCached > 0 && c.RestartTTFT < c.RestartColdTTFT},
		check{"4 concurrent greedy answers equal the same 4 one at a time", r.GreedySame})
	return out
}

// synthModel writes the synthetic qwen2.5-0.5b Q4_0 shape once into the
// cache folder (as `churon dev synth --shape qwen2.5-0.5b --type Q4_0
// --seed 1` does) and returns its path.
func synthModel() (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(cache, "churon", "serveload")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	p := filepath.Join(dir, "qwen2.5-0.5b-Q4_0-seed1.gguf")
	if _, err := os.Stat(p); err == nil {
		return p, nil
	}
	s, err := synth.Preset("qwen2.5-0.5b", "Q4_0", 1)
	if err != nil {
		return "", err
	}
	fmt.Fprintf(os.Stderr, "serveload: writing %s (once)\n", p)
	tmp := p + ".part"
	if err := synth.Write(tmp, s); err != nil {
		return "", err
	}
	return p, os.Rename(tmp, p)
}

// harness is the session and the server of one run.
type harness struct {
	st      *store.Store
	m       *session.Manager
	srv     *serve.Server
	base    string
	backend string
	steps   chan session.StepInfo
	drained chan struct{}
	mu      sync.Mutex
	watch   func(session.StepInfo)
}

func start(ctx context.Context, o options, dir string) (*harness, error) {
	st, err := store.Open(ctx, filepath.Join(dir, "churon.db"))
	if err != nil {
		return nil, err
	}
	disk, err := kvcache.Open(filepath.Join(dir, "kv"), 0)
	if err != nil {
		return nil, err
	}
	h := &harness{st: st, drained: make(chan struct{})}
	maxN := 8
	for _, n := range o.clients {
		maxN = max(maxN, n)
	}
	h.m = session.New(st, session.Options{Threads: o.threads, Disk: disk, MaxAnswers: maxN, Prefill: o.prefill,
		OnStep: func(si session.StepInfo) {
			h.mu.Lock()
			w := h.watch
			h.mu.Unlock()
			if w != nil {
				w(si)
			}
		}})
	loaded := make(chan error, 1)
	go func() {
		defer close(h.drained)
		for ev := range h.m.Events() {
			switch e := ev.(type) {
			case api.ModelLoaded:
				h.backend = e.Info.Backend
				loaded <- nil
			case api.Error:
				if e.Op == "load model" {
					loaded <- e.Err
				}
			}
		}
	}()
	if err := h.m.LoadModel(o.model); err != nil {
		return nil, err
	}
	select {
	case err := <-loaded:
		if err != nil {
			return nil, err
		}
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	h.srv = serve.New(serve.Options{Session: h.m})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	if err := h.srv.StartOn(ln, apiserve.Config{MaxConnections: 64}); err != nil {
		return nil, err
	}
	h.base = "http://" + ln.Addr().String()
	return h, nil
}

func (h *harness) close() {
	h.srv.Stop()
	h.m.Close()
	<-h.drained
	h.st.Close()
}

func (h *harness) onStep(f func(session.StepInfo)) {
	h.mu.Lock()
	h.watch = f
	h.mu.Unlock()
}

// answer is one streamed request as its client saw it.
type answer struct {
	start    time.Time
	ttft     time.Duration
	gaps     []time.Duration // between text chunks
	text     string
	tokens   int
	prompt   int
	cached   int
	finished time.Time
}

// prompt is the i-th client's prompt: distinct words, so that no two
// share more than the template's opening.
func prompt(i, words int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Request %d:", i)
	for k := range words {
		fmt.Fprintf(&b, " w%d_%d", i, k)
	}
	return b.String()
}

func (h *harness) stream(ctx context.Context, content string, tokens int) (answer, error) {
	return h.streamMessages(ctx, []map[string]string{{"role": "user", "content": content}}, tokens)
}

func (h *harness) streamMessages(ctx context.Context, msgs []map[string]string, tokens int) (answer, error) {
	body, _ := json.Marshal(map[string]any{"messages": msgs, "max_tokens": tokens, "temperature": 0, "stream": true,
		"stream_options": map[string]bool{"include_usage": true}})
	var a answer
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.base+"/v1/chat/completions", strings.NewReader(string(body)))
	if err != nil {
		return a, err
	}
	req.Header.Set("Content-Type", "application/json")
	a.start = time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return a, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return a, fmt.Errorf("%d %s", resp.StatusCode, b)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	last := time.Time{}
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		var c openai.ChatChunk
		if err := json.Unmarshal([]byte(data), &c); err != nil {
			return a, err
		}
		if u := c.Usage; u != nil {
			a.tokens, a.prompt = u.CompletionTokens, u.PromptTokens
			if u.PromptTokensDetails != nil {
				a.cached = u.PromptTokensDetails.CachedTokens
			}
		}
		text := c.Text()
		if text == "" {
			continue
		}
		now := time.Now()
		if last.IsZero() {
			a.ttft = now.Sub(a.start)
		} else {
			a.gaps = append(a.gaps, now.Sub(last))
		}
		last = now
		a.text += text
	}
	a.finished = time.Now()
	return a, sc.Err()
}

// median is the level whose aggregate is the median of runs (the lower
// of the two middle ones).
func median(runs []level) level {
	s := slices.Clone(runs)
	slices.SortFunc(s, func(a, b level) int {
		switch {
		case a.Aggregate < b.Aggregate:
			return -1
		case a.Aggregate > b.Aggregate:
			return 1
		}
		return 0
	})
	return s[(len(s)-1)/2]
}

// level runs n clients at once, each asking for tokens (round r picks
// prompts no other round asked).
func (h *harness) level(ctx context.Context, n, tokens, r int) (level, error) {
	answers := make([]answer, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	var tally stepTally
	h.onStep(tally.add)
	defer h.onStep(nil)
	start, cpu0 := time.Now(), cpuTime()
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			answers[i], errs[i] = h.stream(ctx, prompt(10000*r+100*n+i, 24), tokens)
		}()
	}
	wg.Wait()
	wall := time.Since(start)
	cpu := cpuTime() - cpu0
	if err := errors.Join(errs...); err != nil {
		return level{}, err
	}
	lv := level{Clients: n, Wall: wall, Steps: tally.figures(wall)}
	var ttfts, gaps []time.Duration
	for _, a := range answers {
		lv.Tokens += a.tokens
		ttfts = append(ttfts, a.ttft)
		gaps = append(gaps, a.gaps...)
	}
	lv.Aggregate = float64(lv.Tokens) / wall.Seconds()
	if cpu > 0 {
		lv.PerCPU = float64(lv.Tokens) / cpu.Seconds()
	}
	lv.TTFT50, lv.TTFT95, lv.ITL95 = percentile.Of(ttfts, 50), percentile.Of(ttfts, 95), percentile.Of(gaps, 95)
	return lv, nil
}

// longPrompt measures three decoding answers' inter-token p95 alone, then
// with a long prompt arriving once they decode.
func (h *harness) longPrompt(ctx context.Context, tokens, long int) (longFigure, error) {
	var lf longFigure
	three := func(withLong bool) ([]answer, answer, error) {
		answers := make([]answer, 3)
		errs := make([]error, 4)
		var wg sync.WaitGroup
		var la answer
		started := make(chan struct{})
		var once sync.Once
		h.onStep(func(si session.StepInfo) {
			if si.Decoding >= 3 {
				once.Do(func() { close(started) })
			}
			if withLong && si.Prefill > 0 && si.Decoding > 0 {
				if lf.ChunkMin == 0 || si.Prefill < lf.ChunkMin {
					lf.ChunkMin = si.Prefill
				}
				lf.ChunkMax = max(lf.ChunkMax, si.Prefill)
			}
		})
		defer h.onStep(nil)
		base := 1000
		if withLong {
			base = 2000
		}
		for i := range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				answers[i], errs[i] = h.stream(ctx, prompt(base+i, 24), tokens)
			}()
		}
		if withLong {
			select {
			case <-started:
			case <-ctx.Done():
				return nil, la, ctx.Err()
			}
			time.Sleep(50 * time.Millisecond) // a few tokens in
			wg.Add(1)
			go func() {
				defer wg.Done()
				la, errs[3] = h.stream(ctx, longText(long), 8)
			}()
		}
		wg.Wait()
		return answers, la, errors.Join(errs...)
	}
	alone, _, err := three(false)
	if err != nil {
		return lf, err
	}
	with, la, err := three(true)
	if err != nil {
		return lf, err
	}
	// The others' gaps while the long prompt was being processed: from
	// its arrival to its first token.
	var baseGaps, withGaps []time.Duration
	for _, a := range alone {
		baseGaps = append(baseGaps, a.gaps...)
	}
	for _, a := range with {
		withGaps = append(withGaps, a.gaps...)
	}
	lf.PromptTokens, lf.LongTTFT = la.prompt, la.ttft
	lf.Base95, lf.With95 = percentile.Of(baseGaps, 95), percentile.Of(withGaps, 95)
	if lf.Base95 > 0 {
		lf.Ratio = float64(lf.With95) / float64(lf.Base95)
	}
	return lf, nil
}

// longText is a prompt of about n tokens.
func longText(n int) string {
	var b strings.Builder
	b.WriteString("Summarise:")
	for k := 0; k < n/4; k++ { // " x42" is about four tokens
		fmt.Fprintf(&b, " x%d", k%97)
	}
	return b.String()
}

// continuing measures a follow-up's cached tokens and TTFT, then the same
// after the session and the server restart, each against a cold request
// of about the same length.
func (h *harness) continuing(ctx context.Context, o options, dir string) (contFigure, error) {
	var c contFigure
	msgs := []map[string]string{{"role": "system", "content": longText(300)}, {"role": "user", "content": "Go on."}}
	first, err := h.streamMessages(ctx, msgs, 16)
	if err != nil {
		return c, err
	}
	msgs = append(msgs, map[string]string{"role": "assistant", "content": first.text}, map[string]string{"role": "user", "content": "More."})
	ca, warm, err := h.coldThenWarm(ctx, msgs, "Other. ")
	if err != nil {
		return c, err
	}
	c.Prompt, c.Cached, c.ColdTTFT, c.WarmTTFT = warm.prompt, warm.cached, ca.ttft, warm.ttft
	// Restart: the snapshots on disk are what is left.
	time.Sleep(200 * time.Millisecond) // the background snapshot
	h.close()
	g, err := start(ctx, o, dir)
	if err != nil {
		return c, err
	}
	c.h = g
	msgs = append(msgs, map[string]string{"role": "assistant", "content": warm.text}, map[string]string{"role": "user", "content": "Again."})
	ca2, after, err := g.coldThenWarm(ctx, msgs, "Third. ")
	if err != nil {
		return c, err
	}
	c.RestartPrompt, c.RestartCached, c.RestartTTFT, c.RestartColdTTFT = after.prompt, after.cached, after.ttft, ca2.ttft
	return c, nil
}

// coldThenWarm streams a cold request of about msgs' length (its system
// prompt starts with other instead), then msgs itself, which the server
// may answer from its cache.
func (h *harness) coldThenWarm(ctx context.Context, msgs []map[string]string, other string) (cold, warm answer, err error) {
	c := slices.Clone(msgs)
	c[0] = map[string]string{"role": "system", "content": other + longText(300)}
	if cold, err = h.streamMessages(ctx, c, 16); err != nil {
		return cold, warm, err
	}
	warm, err = h.streamMessages(ctx, msgs, 16)
	return cold, warm, err
}

// greedySame compares four concurrent greedy answers with the same four
// one at a time.
func (h *harness) greedySame(ctx context.Context) (bool, error) {
	prompts := []string{prompt(9001, 8), prompt(9002, 20), prompt(9003, 4), prompt(9004, 40)}
	alone := make([]string, 4)
	for i, p := range prompts {
		a, err := h.stream(ctx, p, 48)
		if err != nil {
			return false, err
		}
		alone[i] = a.text
	}
	together := make([]string, 4)
	errs := make([]error, 4)
	var wg sync.WaitGroup
	for i, p := range prompts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var a answer
			a, errs[i] = h.stream(ctx, p, 48)
			together[i] = a.text
		}()
	}
	wg.Wait()
	return slices.Equal(alone, together), errors.Join(errs...)
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}
