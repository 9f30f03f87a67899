package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/churon/churon/engine/quant"
	"github.com/churon/churon/models/synth"
)

func init() {
	register("dev", "developer tools: dev synth (random-weight models of real shapes)", runDev)
}

func runDev(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprintln(stderr, "Usage: churon dev synth --shape SHAPE --type TYPE [--seed N] -o FILE.gguf")
		if len(args) == 0 {
			return usagef("a dev subcommand is required")
		}
		return nil
	}
	switch args[0] {
	case "synth":
		return runSynth(ctx, args[1:], stdout, stderr)
	}
	return usagef("unknown dev subcommand %q (have: synth)", args[0])
}

// runSynth writes a random-weight model of a real shape, the same bytes
// for the same flags on every machine, so benchmarks need no downloads.
func runSynth(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("dev synth", stderr)
	shape := fs.String("shape", "", "model shape: "+strings.Join(synth.Presets(), ", "))
	typ := fs.String("type", "Q4_0", "file type, with llama-quantize's per-tensor rules: "+fileTypeList())
	pure := fs.Bool("pure", false, "give every matrix the --type tensor type (any ggml type), no per-tensor rules")
	seed := fs.Uint64("seed", 1, "random seed")
	out := fs.String("o", "", "output `file`")
	vocab := fs.Int("vocab", 0, "override the vocabulary size (filler pieces)")
	layers := fs.Int("layers", 0, "override the number of layers")
	tied := fs.String("tied", "", "override output tying: yes or no")
	workers := fs.Int("workers", 0, "generator goroutines (0 = all CPUs; the file does not depend on it)")
	if _, err := parse(fs, args); err != nil {
		return err
	}
	if *shape == "" || *out == "" {
		return usagef("--shape and -o are required")
	}
	ft := synth.FileType("F16")
	var pureType quant.Type
	if *pure {
		t, err := quant.ParseType(*typ)
		if err != nil {
			return usagef("--type: %v", err)
		}
		pureType = t
	} else {
		t, err := synth.ParseFileType(*typ)
		if err != nil {
			return usagef("--type: %v", err)
		}
		ft = t
	}
	s, err := synth.Preset(*shape, ft, *seed)
	if err != nil {
		return usagef("%v", err)
	}
	if *pure {
		s.FileType, s.Type = "", pureType
	}
	if *vocab > 0 {
		s.Vocab = *vocab
	}
	if *layers > 0 {
		s.Layers = *layers
	}
	switch strings.ToLower(*tied) {
	case "":
	case "yes", "true":
		s.Tied = true
	case "no", "false":
		s.Tied = false
	default:
		return usagef("--tied %q: want yes or no", *tied)
	}
	s.Workers = *workers
	ts, err := s.Tensors()
	if err != nil {
		return err
	}
	mix := map[quant.Type]int64{}
	var params, bytes int64
	for _, t := range ts {
		n := int64(1)
		for _, d := range t.Shape {
			n *= int64(d)
		}
		params += n
		bytes += t.Bytes()
		mix[t.Type] += t.Bytes()
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	start := time.Now()
	if err := synth.Write(*out, s); err != nil {
		return err
	}
	st, err := os.Stat(*out)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: %s %s, %d layers × %d, vocab %d, %.0fM parameters, %.1f MiB (%s), seed %d, %.1fs\n",
		*out, *shape, *typ, s.Layers, s.Embd, s.Vocab, float64(params)/1e6, float64(st.Size())/(1<<20),
		mixString(mix, bytes), *seed, time.Since(start).Seconds())
	return nil
}

func fileTypeList() string {
	var names []string
	for _, f := range synth.FileTypes() {
		names = append(names, string(f))
	}
	return strings.Join(names, ", ")
}

// mixString lists the share of weight bytes per type, largest first.
func mixString(mix map[quant.Type]int64, total int64) string {
	parts := make([]string, 0, len(mix))
	for _, t := range keysByCount(mix) {
		parts = append(parts, fmt.Sprintf("%v %.0f%%", t, 100*float64(mix[t])/float64(total)))
	}
	return strings.Join(parts, ", ")
}
