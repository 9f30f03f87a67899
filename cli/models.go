package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/mattn/go-isatty"

	"github.com/churon/churon/app/models"
	"github.com/churon/churon/internal/units"
	"github.com/churon/churon/models/download"
	"github.com/churon/churon/models/fit"
	"github.com/churon/churon/models/header"
	"github.com/churon/churon/models/library"
)

func init() {
	register("pull", "download a model: pull REPO[:FILE|QUANT] or pull --url URL [--sha256 HEX]", runPull)
	register("models", "list the models in the library", runModels)
	register("rm", "delete a model from the library", runRm)
}

// service is the model-management service over the library folder dir
// (the app's when empty), without a persistent queue: the command line
// downloads while it runs. The hub's address and token come from
// $CHURON_HUB_URL and $HF_TOKEN.
func service(dir string, dl download.Options) *models.Service {
	return models.New(models.Options{Dir: libraryDir(dir), QueueFile: "-", Download: dl, Headers: header.Reader{}})
}

// libraryDir is the library folder: the flag's, else the app's.
func libraryDir(flagDir string) string {
	if flagDir != "" {
		return flagDir
	}
	return models.DefaultDir()
}

func runPull(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("pull", stderr)
	rawURL := fs.String("url", "", "download this URL instead of a hub file")
	sum := fs.String("sha256", "", "expected SHA-256 (hex) of the file")
	out := fs.String("o", "", "folder to download into (default: the library folder)")
	conns := fs.Int("connections", 4, "parallel connections per file")
	rev := fs.String("revision", "main", "hub revision (branch, tag or commit)")
	ctxLen := fs.Int("ctx", 0, "context length for the memory check (0: the model's, at most 8192)")
	force := fs.Bool("force", false, "download even if the memory check says it will not fit, or replace an existing file")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	prog := &pullProgress{w: stderr, tty: isTerminal(stderr)}
	svc := service(*out, download.Options{Connections: *conns, Overwrite: *force, OnRetry: prog.retry})
	defer svc.Close()

	var pulls []models.Pull
	switch {
	case *rawURL != "" && len(pos) == 0:
		p, err := svc.PlanURL(*rawURL, *sum)
		if err != nil {
			return usagef("--url needs an http(s) URL ending in a file name")
		}
		pulls = append(pulls, p)
	case *rawURL == "" && len(pos) == 1:
		repo, want, _ := strings.Cut(pos[0], ":")
		v, err := svc.Resolve(ctx, repo, *rev, want)
		if err != nil {
			return err
		}
		// The memory check reads only the header of the first part.
		if meta, fetched, err := svc.RemoteMeta(ctx, repo, *rev, v.Files[0].Path); err == nil {
			meta.WeightBytes = v.Size - meta.HeaderBytes
			res := fit.Check(fit.EstimateMemory(meta, *ctxLen), svc.Memory())
			fmt.Fprintf(stderr, "%s %s: %s (header read in %d bytes)\n", repo, v.Quant, res, fetched)
			if res.Verdict == fit.WontFit && !*force {
				return fmt.Errorf("the model will not fit in this machine's memory; pass --force to download it anyway")
			}
		} else {
			fmt.Fprintf(stderr, "memory check skipped: %s\n", message(err))
		}
		pulls = svc.Plan(repo, *rev, v)
	default:
		return usagef("usage: churon pull REPO[:FILE|QUANT] | churon pull --url URL [--sha256 HEX] [-o DIR]")
	}

	for _, p := range pulls {
		d, err := svc.Fetch(ctx, p, prog.follow)
		if err != nil {
			return err
		}
		if d.BytesComplete() > d.BytesFetched() && d.BytesFetched() > 0 {
			fmt.Fprintf(stderr, "resumed: %s were already on disk\n", download.FormatBytes(d.BytesComplete()-d.BytesFetched()))
		}
		fmt.Fprintln(stdout, p.Request.Dest)
	}
	return nil
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	// /dev/null is a character device too: ask the terminal driver.
	return isatty.IsTerminal(f.Fd())
}

// modelJSON is the stable shape of `churon models --json` (one array).
type modelJSON struct {
	Name          string         `json:"name"`
	Path          string         `json:"path"`
	Parts         []string       `json:"parts,omitempty"`
	Size          int64          `json:"size"`
	Architecture  string         `json:"architecture"`
	Parameters    int64          `json:"parameters"`
	Quant         string         `json:"quant"`
	ContextLength int            `json:"context_length"`
	HasTemplate   bool           `json:"has_template"`
	Managed       bool           `json:"managed"`
	Origin        library.Origin `json:"origin"`
	Error         string         `json:"error,omitempty"`
}

func runModels(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("models", stderr)
	asJSON := fs.Bool("json", false, "print JSON")
	dir := fs.String("dir", "", "library folder (default: the app's)")
	if _, err := parse(fs, args); err != nil {
		return err
	}
	svc := service(*dir, download.Options{})
	defer svc.Close()
	ms, err := svc.List(ctx)
	if err != nil {
		return err
	}
	if *asJSON {
		out := []modelJSON{}
		for _, m := range ms {
			out = append(out, modelJSON{Name: m.Name(), Path: m.Path, Parts: m.Parts, Size: m.Size, Architecture: m.Meta.Architecture,
				Parameters: m.Meta.Parameters, Quant: m.Meta.Quant, ContextLength: m.Meta.ContextLength, HasTemplate: m.Meta.HasTemplate,
				Managed: m.Managed, Origin: m.Origin, Error: m.Err})
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	if len(ms) == 0 {
		fmt.Fprintf(stdout, "no models in %s yet; try: churon pull Qwen/Qwen2.5-0.5B-Instruct-GGUF\n", svc.Dir())
		return nil
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tARCH\tPARAMS\tQUANT\tSIZE\tCONTEXT\tPATH")
	for _, m := range ms {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\n", m.Name(), m.Meta.Architecture, units.Params(m.Meta.Parameters), m.Meta.Quant,
			download.FormatBytes(m.Size), m.Meta.ContextLength, m.Path)
	}
	return tw.Flush()
}

func runRm(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("rm", stderr)
	yes := fs.Bool("y", false, "do not ask for confirmation")
	dir := fs.String("dir", "", "library folder (default: the app's)")
	pos, err := parseN(fs, args, 1, "usage: churon rm [-y] MODEL (a name or path from 'churon models')")
	if err != nil {
		return err
	}
	svc := service(*dir, download.Options{})
	defer svc.Close()
	m, err := svc.Find(ctx, pos[0])
	if err != nil {
		return err
	}
	if !*yes {
		if !isTerminal(os.Stdin) {
			return usagef("pass -y to delete %s without a question", m.Path)
		}
		fmt.Fprintf(stderr, "Delete %s (%s)? [y/N] ", m.Path, download.FormatBytes(m.Size))
		line, _ := bufio.NewReader(os.Stdin).ReadString('\n')
		if a := strings.ToLower(strings.TrimSpace(line)); a != "y" && a != "yes" {
			return errors.New("not deleted")
		}
	}
	deleted, err := svc.Remove(m)
	if err != nil {
		return err
	}
	if deleted {
		fmt.Fprintf(stdout, "deleted %s\n", m.Path)
	} else {
		fmt.Fprintf(stdout, "removed %s from the library (the file is not Churon's and was left in place)\n", m.Path)
	}
	return nil
}
