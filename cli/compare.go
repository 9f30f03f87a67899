package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	apicompare "github.com/churon/churon/app/api/compare"
	"github.com/churon/churon/app/api/session"
	"github.com/churon/churon/app/compare"
	"github.com/churon/churon/app/store"
)

func init() {
	register("compare", "run 2–4 models (quantizations) on one prompt: speed, memory, KL divergence", runCompare)
}

// runCompare runs `churon compare`. Its --json output is compare.Result
// (one object): the `models` array has per model `file`, `load_ms`,
// `ttft_ms`, `prompt_tps`, `gen_tps`, `file_bytes`, `bpw`, `rss_bytes`,
// `output` and `quality` (`kld_mean`, `kld_p99`, `top1_agreement`, a
// fraction, `ppl_ratio`, with per-segment detail); see app/compare.
func runCompare(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("compare", stderr)
	var models stringList
	var sf samplingFlags
	fs.Var(&models, "m", "model `file` (GGUF, or remote:CONN/MODEL served elsewhere; repeat for 2 to 4 models)")
	prompt := fs.String("p", "", "prompt `text` (or give it as an argument)")
	system := fs.String("system", "", "system prompt (chat template only)")
	raw := fs.Bool("raw", false, "use the prompt as is, without the reference's chat template")
	ref := fs.String("ref", "", "reference model `file` (one of -m; default: the most bits per weight)")
	sf.register(fs, compareDefaults())
	threads := fs.Int("t", 0, "CPU threads (0 = all)")
	ctxLen := fs.Int("c", 0, "context length in tokens (0 = the prompt plus -n, and the built-in texts)")
	kv := fs.String("kv", "f16", "KV cache type of every model: f16, f32 or q8_0")
	noMmap := fs.Bool("no-mmap", false, "read weights into memory instead of mapping the files")
	textTokens := fs.Int("text-tokens", 0, fmt.Sprintf("tokens scored per built-in text (0 = %d, -1 = none)", apicompare.DefaultTextTokens))
	title := fs.String("title", "", "title of the comparison (default: from the types and the prompt)")
	asJSON := fs.Bool("json", false, "print the result as one JSON object instead of a table")
	save := fs.Bool("save", false, "save the result in the chat database (reopen with --show ID)")
	md := fs.String("md", "", "also write a Markdown report to `file` (the chart beside it as .png)")
	htmlOut := fs.String("html", "", "also write a self-contained HTML report to `file`")
	pngOut := fs.String("png", "", "also write the KLD chart to `file` (PNG)")
	list := fs.Bool("list", false, "list the saved comparisons instead of running one")
	show := fs.Int64("show", 0, "reopen saved comparison `ID` instead of running one (prints it; --json, --md, --html, --png apply)")
	quiet := fs.Bool("q", false, "no progress on stderr")
	topLogprobs := fs.Int("top-logprobs", 5, "with a remote model (-m remote:CONN/MODEL): the `k` most likely tokens the reference reports at each place, for the KLD estimate (1–20)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(stdout)
	defer w.Flush()

	if *list {
		return listComparisons(ctx, w, *asJSON)
	}
	var res *apicompare.Result
	if *show != 0 {
		st, err := store.OpenDefault(ctx)
		if err != nil {
			return err
		}
		defer st.Close()
		if res, err = compare.Load(ctx, st, *show); err != nil {
			return err
		}
	} else {
		text := textOrArgs(*prompt, pos)
		if len(models) < 2 || len(models) > 4 {
			return usagef("give 2 to 4 models: -m A.gguf -m B.gguf [-m …]")
		}
		if strings.TrimSpace(text) == "" {
			return usagef("a prompt is required: -p TEXT")
		}
		gen, seed, err := sf.options()
		if err != nil {
			return err
		}
		if _, err := kvType(*kv); err != nil {
			return err
		}
		if session.AnyRemote(models) {
			if *save || *md != "" || *htmlOut != "" || *pngOut != "" {
				return usagef("--save, --md, --html and --png compare local models only, for now")
			}
			return runCrossCompare(ctx, w, stderr, apicompare.CrossOptions{Models: models, Remotes: openRemotes(), Ref: *ref,
				Prompt: text, System: *system, MaxTokens: sf.n, TopK: *topLogprobs, Threads: *threads}, *asJSON)
		}
		opt := apicompare.Options{
			Models: models, Ref: *ref, Prompt: text, System: *system, Raw: *raw, Sampling: compare.SamplingOf(gen),
			Threads: *threads, Context: *ctxLen, InMemory: *noMmap, TextTokens: *textTokens, Title: *title, KV: *kv,
		}
		var progress func(apicompare.Event)
		if !*quiet {
			progress = compareProgress(stderr)
			fmt.Fprintf(stderr, "churon compare: seed %d\n", seed)
		}
		if res, err = compare.Run(ctx, opt, progress); err != nil {
			return err
		}
		if *save {
			st, err := store.OpenDefault(ctx)
			if err != nil {
				return err
			}
			err = compare.Save(ctx, st, res)
			st.Close()
			if err != nil {
				return err
			}
			fmt.Fprintf(stderr, "churon compare: saved as comparison %d (churon compare --show %d)\n", res.ID, res.ID)
		}
	}
	if err := exportComparison(res, *md, *htmlOut, *pngOut, stderr); err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(w, res)
	}
	return apicompare.WriteTable(w, res)
}

func exportComparison(res *apicompare.Result, md, htmlOut, pngOut string, stderr io.Writer) error {
	if md != "" {
		if err := apicompare.ExportMarkdown(md, res, apicompare.ChartOptions{}); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "churon compare: wrote %s\n", md)
	}
	if htmlOut != "" {
		if err := apicompare.ExportHTML(htmlOut, res, apicompare.ChartOptions{}); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "churon compare: wrote %s\n", htmlOut)
	}
	if pngOut != "" {
		if err := apicompare.ExportPNG(pngOut, res, apicompare.ChartOptions{}); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "churon compare: wrote %s\n", pngOut)
	}
	return nil
}

// comparisonJSON is one line of `churon compare --list --json`.
type comparisonJSON struct {
	ID      int64  `json:"id"`
	Title   string `json:"title"`
	Prompt  string `json:"prompt"`
	Created string `json:"created"`
	Updated string `json:"updated"`
}

func listComparisons(ctx context.Context, w io.Writer, asJSON bool) error {
	st, err := store.OpenDefault(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	list, err := st.ListComparisons(ctx, 0)
	if err != nil {
		return err
	}
	for _, c := range list {
		if asJSON {
			b, err := json.Marshal(comparisonJSON{ID: c.ID, Title: c.Title, Prompt: c.Prompt,
				Created: c.Created.UTC().Format(time.RFC3339), Updated: c.Updated.UTC().Format(time.RFC3339)})
			if err != nil {
				return err
			}
			fmt.Fprintf(w, "%s\n", b)
			continue
		}
		fmt.Fprintf(w, "%6d  %s  %s\n", c.ID, c.Updated.Local().Format("2006-01-02 15:04"), c.Title)
	}
	return nil
}

// compareProgress prints a line per step to stderr.
func compareProgress(stderr io.Writer) func(apicompare.Event) {
	types := map[int]string{}
	return func(ev apicompare.Event) {
		switch e := ev.(type) {
		case apicompare.Planned:
			for i, p := range e.Models {
				types[i] = p.Type
			}
			fmt.Fprintf(stderr, "churon compare: %d models, reference %s (%.2f bits per weight), run one after another\n",
				len(e.Models), e.Models[e.Reference].File, e.Models[e.Reference].BPW)
		case apicompare.ModelLoaded:
			fmt.Fprintf(stderr, "  [%d] %s: loaded in %.0f ms, %s\n", e.Model+1, types[e.Model], ms(e.Load), e.Backend)
		case apicompare.PromptReady:
			fmt.Fprintf(stderr, "  prompt: %d tokens (%s)\n", len(e.Tokens), e.Template)
		case apicompare.Generated:
			r := e.Result
			fmt.Fprintf(stderr, "  [%d] %d tokens (%s), TTFT %.0f ms, %.1f tok/s\n", e.Model+1, len(r.Tokens), r.Finish, r.TTFTMs, r.GenTPS)
		case apicompare.QualityReady:
			fmt.Fprintf(stderr, "  [%d] scored %d tokens: KLD mean %s, top-1 %.1f%%\n", e.Model+1, e.Quality.Tokens,
				strconv.FormatFloat(e.Quality.KLDMean, 'g', 4, 64), 100*e.Quality.Top1Agreement)
		}
	}
}

// runCrossCompare compares local models with remote ones (see
// compare.RunCross) and prints the columns side by side.
func runCrossCompare(ctx context.Context, w *bufio.Writer, stderr io.Writer, opt apicompare.CrossOptions, asJSON bool) error {
	if opt.TopK < 1 || opt.TopK > 20 {
		return usagef("--top-logprobs %d: want 1 to 20", opt.TopK)
	}
	res, err := compare.RunCross(ctx, opt)
	if err != nil {
		return err
	}
	if asJSON {
		return writeJSON(w, res)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "\tmodel\tTTFT ms\tgen tok/s\tprompt\tgenerated\tKLD (est.)\ttop-1\tnote")
	for i, c := range res.Columns {
		mark := ""
		if i == res.Reference {
			mark = "ref"
		}
		kld, top1 := "—", "—"
		if c.KLD != nil {
			kld = fmt.Sprintf("%.4f", *c.KLD)
		}
		if c.Top1 != nil {
			top1 = fmt.Sprintf("%.1f%%", 100**c.Top1)
		}
		note := c.Note
		if c.Error != "" {
			note = "failed: " + c.Error
		}
		fmt.Fprintf(tw, "%s\t%s\t%.0f\t%.1f\t%d\t%d\t%s\t%s\t%s\n", mark, c.Model, c.TTFTMs, c.GenTPS, c.PromptTokens, c.GenTokens, kld, top1, note)
	}
	tw.Flush()
	fmt.Fprintf(w, "\n%s.\n", res.Label)
	for _, c := range res.Columns {
		fmt.Fprintf(w, "\n%s:\n%s\n", c.Model, strings.TrimSpace(c.Text))
	}
	return nil
}
