package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/churon/churon/engine"
	"github.com/churon/churon/engine/backend/cpu"
	"github.com/churon/churon/internal/units"
)

func init() {
	register("bench", "prompt and generation speed, like llama-bench (--bandwidth: memory read speed; --followup: follow-up TTFT cold, warm and restored from disk)", runBench)
}

// benchJSON is the documented shape of one `churon bench --json` line.
type benchJSON struct {
	Model      string `json:"model"`
	ModelName  string `json:"model_name"`
	Type       string `json:"type"` // file type, e.g. Q4_K_M
	ModelBytes int64  `json:"model_bytes"`
	Params     int64  `json:"params"`
	Backend    string `json:"backend"`
	Threads    int    `json:"threads"`
	Mmap       bool   `json:"mmap"`
	NPrompt    int    `json:"n_prompt"`
	NGen       int    `json:"n_gen"`
	Depth      int    `json:"depth"`
	Batch      int    `json:"batch"` // sequences decoded together
	Reps       int    `json:"reps"`
	// Tokens per second over all sequences: mean and standard deviation
	// over the repetitions (0 when the test was not run).
	PPTPS float64 `json:"pp_tps"`
	PPStd float64 `json:"pp_std"`
	TGTPS float64 `json:"tg_tps"`
	TGStd float64 `json:"tg_std"`
	// WeightsBytes is what one decode step reads (shared by the batch);
	// WeightsGBps that times steps per second.
	WeightsBytes int64   `json:"weights_bytes"`
	WeightsGBps  float64 `json:"weights_gbps"`
	// ReadGBps is this machine's streaming read bandwidth with the same
	// threads, BandwidthPct the share of it decoding used (0 if not
	// measured).
	ReadGBps     float64 `json:"read_gbps"`
	BandwidthPct float64 `json:"bandwidth_pct"`
}

// bandwidthJSON is the documented shape of `churon bench --bandwidth --json`.
type bandwidthJSON struct {
	SizeBytes int64   `json:"size_bytes"`
	Threads   int     `json:"threads"`
	ReadGBps  float64 `json:"read_gbps"`    // with Threads threads
	ReadGBps1 float64 `json:"read_gbps_1t"` // with one thread
	Results   []struct {
		Threads  int     `json:"threads"`
		ReadGBps float64 `json:"read_gbps"`
	} `json:"results"`
}

// intList is a flag of comma-separated integers, as llama-bench takes.
type intList []int

func (l *intList) String() string {
	parts := make([]string, len(*l))
	for i, v := range *l {
		parts[i] = strconv.Itoa(v)
	}
	return strings.Join(parts, ",")
}

func (l *intList) Set(s string) error {
	*l = (*l)[:0]
	for _, p := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || v < 0 {
			return fmt.Errorf("%q is not a non-negative integer", p)
		}
		*l = append(*l, v)
	}
	return nil
}

func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == followupChildFlag {
		return followupChildMain(ctx, args[1:], stdout, stderr)
	}
	fs := newFlags("bench", stderr)
	model := fs.String("m", "", "model `file` (GGUF)")
	pp := intList{512}
	tg := intList{128}
	threads := intList{0}
	depth := intList{0}
	batch := intList{1}
	fs.Var(&pp, "p", "prompt tokens to process (comma-separated list; 0 skips)")
	fs.Var(&tg, "n", "tokens to generate (comma-separated list; 0 skips)")
	fs.Var(&threads, "t", "CPU threads (list; 0 = physical cores)")
	fs.Var(&depth, "depth", "tokens already in the KV cache before each test (list; prefilled, not timed)")
	fs.Var(&batch, "batch", "sequences processed together (list)")
	reps := fs.Int("r", 5, "repetitions of each test")
	noMmap := fs.Bool("no-mmap", false, "read weights into memory instead of mapping the file")
	lock := fs.Bool("lock", false, "lock the weights in RAM (mlock)")
	noBW := fs.Bool("no-bandwidth", false, "do not measure memory bandwidth for the weights' share of it")
	bandwidth := fs.Bool("bandwidth", false, "measure this machine's memory read bandwidth instead")
	sizeMiB := fs.Int("size", 1024, "MiB the bandwidth measurement streams (far larger than the caches)")
	asJSON := fs.Bool("json", false, "print one JSON object per test instead of a table")
	followup := fs.Bool("followup", false, "time the first token of a follow-up after --history tokens: cold, warm (KV cache in RAM) and restored (snapshot, fresh process); -n is the answer length (default 16)")
	history := fs.Int("history", 2000, "with --followup: tokens of conversation history")
	kvName := fs.String("kv", "f16", "with --followup: KV cache type, f16, f32 or q8_0")
	var df deviceFlags
	df.register(fs)
	if _, err := parse(fs, args); err != nil {
		return err
	}
	if *reps < 1 {
		return usagef("-r must be at least 1")
	}
	w := bufio.NewWriter(stdout)
	defer w.Flush()
	if *bandwidth {
		return benchBandwidth(ctx, w, threads, int64(*sizeMiB)<<20, *reps, *asJSON)
	}
	if *model == "" {
		return usagef("a model is required: -m FILE.gguf (or --bandwidth)")
	}
	if err := localOnly(*model); err != nil {
		return err
	}
	if *followup {
		n := 16
		if givenFlags(fs)["n"] && len(tg) > 0 {
			n = tg[len(tg)-1]
		}
		if n < 1 || *history < 1 {
			return usagef("--followup needs -n ≥ 1 and --history ≥ 1")
		}
		return benchFollowup(ctx, stdout, stderr, *model, threads[len(threads)-1], *history, n, *kvName, *asJSON)
	}
	bwCache := map[int]float64{}
	for _, t := range threads {
		opt := engine.LoadOptions{Threads: t, InMemory: *noMmap, Lock: *lock}
		if err := df.apply(&opt); err != nil {
			return err
		}
		m, err := engine.Load(ctx, *model, opt)
		if err != nil {
			return withPath(*model, err)
		}
		info := m.Info()
		if !*asJSON {
			fmt.Fprintf(w, "model %s: %s %s, %.1f MiB, %s parameters, %s, %s\n", info.Path, info.Architecture,
				info.FileType, float64(info.FileBytes)/(1<<20), units.ParamsPrecise(info.Parameters), info.Backend,
				map[bool]string{true: "weights in memory", false: "weights mapped"}[*noMmap])
			for _, n := range info.DeviceNotes {
				fmt.Fprintf(w, "device note: %s\n", n)
			}
			benchRow(w, "test", "tokens/s", "weights GB/s")
			w.Flush()
		}
		bw, ok := bwCache[info.Threads]
		if !ok && !*noBW {
			rate, err := cpu.ReadBandwidth(ctx, int64(*sizeMiB)<<20, info.Threads, 3)
			if err != nil {
				m.Close()
				return err
			}
			bw = rate / 1e9
			bwCache[info.Threads] = bw
		}
		for _, p := range pp {
			for _, n := range tg {
				for _, d := range depth {
					for _, b := range batch {
						if b < 1 {
							m.Close()
							return usagef("--batch must be at least 1")
						}
						r, err := benchOne(ctx, m, p, n, d, b, *reps)
						if err != nil {
							m.Close()
							return err
						}
						r.Model, r.ModelName, r.Type = info.Path, info.Name, info.FileType
						r.ModelBytes, r.Params, r.Backend, r.Threads = info.FileBytes, info.Parameters, info.Backend, info.Threads
						r.Mmap = !*noMmap
						r.ReadGBps = bw
						if bw > 0 && r.WeightsGBps > 0 {
							r.BandwidthPct = 100 * r.WeightsGBps / bw
						}
						if err := printBench(w, r, *asJSON); err != nil {
							m.Close()
							return err
						}
					}
				}
			}
		}
		m.Close()
	}
	return nil
}

func printBench(w *bufio.Writer, r benchJSON, asJSON bool) error {
	if asJSON {
		if err := writeJSON(w, r); err != nil {
			return err
		}
		return w.Flush()
	}
	suffix := ""
	if r.Depth > 0 {
		suffix += fmt.Sprintf(" @ d%d", r.Depth)
	}
	if r.Batch > 1 {
		suffix += fmt.Sprintf(" × %d seq", r.Batch)
	}
	if r.NPrompt > 0 {
		benchRow(w, fmt.Sprintf("pp%d%s t=%d", r.NPrompt, suffix, r.Threads), fmt.Sprintf("%.1f ± %.1f", r.PPTPS, r.PPStd), "")
	}
	if r.NGen > 0 {
		benchRow(w, fmt.Sprintf("tg%d%s t=%d", r.NGen, suffix, r.Threads), fmt.Sprintf("%.1f ± %.1f", r.TGTPS, r.TGStd), fmt.Sprintf("%.1f", r.WeightsGBps))
		if r.ReadGBps > 0 {
			fmt.Fprintf(w, "  tg reads weights at %.1f GB/s = %.0f %% of measured bandwidth (%.1f GB/s with %d threads)\n",
				r.WeightsGBps, r.BandwidthPct, r.ReadGBps, r.Threads)
		}
	}
	return w.Flush()
}

// benchRow writes one row of the table. The rows are printed as each
// test ends, so the columns have fixed widths, wide enough for a
// 100k tokens/s tiny model's "123456.7 ± 12345.6"; a wider cell still
// gets its borders (the row is then longer than the others).
func benchRow(w io.Writer, test, tps, gbps string) {
	fmt.Fprintf(w, "| %-30s | %20s | %12s |\n", test, tps, gbps)
}

// benchOne times p prompt tokens and n generated tokens for b sequences
// at KV depth d, reps times, like llama-bench: fixed token ids, no
// sampling, a fresh cache per repetition, one untimed warm-up.
func benchOne(ctx context.Context, m *engine.Model, p, n, d, b, reps int) (benchJSON, error) {
	r := benchJSON{NPrompt: p, NGen: n, Depth: d, Batch: b, Reps: reps, WeightsBytes: m.StepBytes()}
	vocab := m.Info().VocabSize
	// Deterministic pseudo-random tokens, as llama-bench feeds.
	state := uint64(12345)
	rnd := func(k int) []int32 {
		out := make([]int32, k)
		for i := range out {
			state = state*6364136223846793005 + 1442695040888963407
			out[i] = int32((state >> 33) % uint64(vocab))
		}
		return out
	}
	seqs := make([]*engine.Sequence, b)
	for i := range seqs {
		s, err := m.NewSequence(engine.SequenceOptions{Context: d + max(p, 32) + n + 2, Batch: 512})
		if err != nil {
			return r, err
		}
		seqs[i] = s
	}
	lists := func(k int) [][]int32 {
		out := make([][]int32, b)
		for i := range out {
			out[i] = rnd(k)
		}
		return out
	}
	reset := func() error {
		for _, s := range seqs {
			if err := s.Truncate(0); err != nil {
				return err
			}
		}
		if d > 0 {
			return m.FeedBatch(ctx, seqs, lists(d))
		}
		return nil
	}
	// Warm-up: touch the weights and grow every buffer once.
	if err := reset(); err != nil {
		return r, err
	}
	if err := m.FeedBatch(ctx, seqs, lists(min(max(p, 1), 32))); err != nil {
		return r, err
	}
	if err := m.DecodeBatch(ctx, seqs, rnd(b)); err != nil {
		return r, err
	}
	var ppRates, tgRates []float64
	for range reps {
		if p > 0 {
			if err := reset(); err != nil {
				return r, err
			}
			prompts := lists(p)
			start := time.Now()
			if err := m.FeedBatch(ctx, seqs, prompts); err != nil {
				return r, err
			}
			ppRates = append(ppRates, float64(b*p)/time.Since(start).Seconds())
		}
		if n > 0 {
			if err := reset(); err != nil {
				return r, err
			}
			toks := rnd(b)
			start := time.Now()
			for range n {
				if err := m.DecodeBatch(ctx, seqs, toks); err != nil {
					return r, err
				}
			}
			tgRates = append(tgRates, float64(b*n)/time.Since(start).Seconds())
		}
	}
	r.PPTPS, r.PPStd = meanStd(ppRates)
	r.TGTPS, r.TGStd = meanStd(tgRates)
	r.WeightsGBps = float64(r.WeightsBytes) * r.TGTPS / float64(b) / 1e9
	return r, nil
}

func meanStd(v []float64) (float64, float64) {
	if len(v) == 0 {
		return 0, 0
	}
	var s float64
	for _, x := range v {
		s += x
	}
	mean := s / float64(len(v))
	if len(v) == 1 {
		return mean, 0
	}
	var ss float64
	for _, x := range v {
		ss += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(ss / float64(len(v)-1))
}

func benchBandwidth(ctx context.Context, w *bufio.Writer, threads intList, size int64, reps int, asJSON bool) error {
	n := cpu.DefaultThreads()
	if len(threads) > 0 && threads[len(threads)-1] > 0 {
		n = threads[len(threads)-1]
	}
	out := bandwidthJSON{SizeBytes: size, Threads: n}
	counts := []int{1}
	if n > 1 {
		counts = append(counts, n)
	}
	for _, t := range counts {
		rate, err := cpu.ReadBandwidth(ctx, size, t, reps)
		if err != nil {
			return err
		}
		gbps := rate / 1e9
		out.Results = append(out.Results, struct {
			Threads  int     `json:"threads"`
			ReadGBps float64 `json:"read_gbps"`
		}{t, gbps})
		if t == 1 {
			out.ReadGBps1 = gbps
		}
		out.ReadGBps = gbps
		if !asJSON {
			fmt.Fprintf(w, "memory read bandwidth, %d MiB streamed, %d thread(s): %.1f GB/s\n", size>>20, t, gbps)
			w.Flush()
		}
	}
	if asJSON {
		enc := json.NewEncoder(w)
		return enc.Encode(out)
	}
	return nil
}
