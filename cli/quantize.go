package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/churon/churon/engine/quantize"
	"github.com/churon/churon/internal/units"
)

func init() {
	register("quantize", "make a smaller model: quantize IN.gguf OUT.gguf TYPE (as llama-quantize)", runQuantize)
}

// quantizeJSON is the stable shape of `churon quantize --json`.
type quantizeJSON struct {
	Input           string         `json:"input"`
	Output          string         `json:"output"`
	Type            string         `json:"type"`      // file type made, e.g. "Q4_K_M"
	FileType        uint32         `json:"file_type"` // its general.file_type
	Tensors         int            `json:"tensors"`
	Converted       int            `json:"converted"`
	Copied          int            `json:"copied"`
	Fallbacks       int            `json:"fallbacks"`
	InBytes         int64          `json:"in_bytes"`
	OutBytes        int64          `json:"out_bytes"`
	Parameters      int64          `json:"parameters"`
	InBitsPerWeight float64        `json:"in_bits_per_weight"`
	BitsPerWeight   float64        `json:"bits_per_weight"`
	TypeCounts      map[string]int `json:"type_counts"` // output tensors per tensor type
	Warnings        []string       `json:"warnings"`
	Threads         int            `json:"threads"`
	Seconds         float64        `json:"seconds"`
}

func runQuantize(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagsWithHelp("quantize", stderr, "Usage: churon quantize IN.gguf OUT.gguf TYPE [-t THREADS] [--allow-requantize] [--pure] [--json]",
		"TYPE: "+strings.Join(quantize.Types(), ", ")+" (Q3_K, Q4_K, Q5_K mean the _M recipes)")
	threads := fs.Int("t", 0, "`threads` (0 = all CPUs); the output does not depend on it")
	allow := fs.Bool("allow-requantize", false, "accept an already-quantized source: dequantize, then quantize (loses more than quantizing the original)")
	pure := fs.Bool("pure", false, "give every weight matrix TYPE's base type, without llama.cpp's per-tensor recipe")
	asJSON := fs.Bool("json", false, "print the report as one JSON object")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 3 {
		return usagef("want IN.gguf OUT.gguf TYPE, got %d arguments (TYPE: %s)", len(pos), strings.Join(quantize.Types(), ", "))
	}
	if _, err := quantize.ParseType(pos[2]); err != nil {
		return usagef("%v", err)
	}
	if *threads < 0 {
		return usagef("-t %d: want 0 (all CPUs) or more", *threads)
	}
	show := quantizeProgress(stderr, isTerminal(stderr), *asJSON)
	rep, err := quantize.File(ctx, pos[0], pos[1], quantize.Options{
		Type: pos[2], Threads: *threads, AllowRequantize: *allow, Pure: *pure, Progress: show,
	})
	if err != nil {
		return err
	}
	for _, w := range rep.Warnings {
		fmt.Fprintln(stderr, "warning:", w)
	}
	if *asJSON {
		warnings := rep.Warnings
		if warnings == nil {
			warnings = []string{}
		}
		return json.NewEncoder(stdout).Encode(quantizeJSON{
			Input: rep.Input, Output: rep.Output, Type: rep.Type, FileType: rep.FileType,
			Tensors: rep.Tensors, Converted: rep.Converted, Copied: rep.Copied, Fallbacks: rep.Fallbacks,
			InBytes: rep.InBytes, OutBytes: rep.OutBytes, Parameters: rep.Parameters,
			InBitsPerWeight: rep.InBitsPerWeight, BitsPerWeight: rep.BitsPerWeight,
			TypeCounts: rep.TypeCounts, Warnings: warnings, Threads: rep.Threads, Seconds: rep.Duration.Seconds(),
		})
	}
	fmt.Fprintf(stdout, "%s: %s, %d tensors (%d converted, %d copied), %.1fM parameters\n",
		rep.Output, rep.Type, rep.Tensors, rep.Converted, rep.Copied, float64(rep.Parameters)/1e6)
	fmt.Fprintf(stdout, "  %s → %s, %.2f → %.2f bits per weight\n",
		units.Bytes(rep.InBytes), units.Bytes(rep.OutBytes), rep.InBitsPerWeight, rep.BitsPerWeight)
	fmt.Fprintf(stdout, "  tensor types: %s\n", typeCountList(rep.TypeCounts))
	fmt.Fprintf(stdout, "  %d threads, %.1fs\n", rep.Threads, rep.Duration.Seconds())
	return nil
}

// quantizeProgress draws a bar on a terminal, or a line every few seconds
// otherwise; with --json it stays quiet until the end.
func quantizeProgress(w io.Writer, tty, quiet bool) func(done, total int64) {
	if quiet {
		return nil
	}
	var last time.Time
	start := time.Now()
	return func(done, total int64) {
		finished := done >= total
		every := 5 * time.Second
		if tty {
			every = 200 * time.Millisecond
		}
		if !finished && time.Since(last) < every {
			return
		}
		last = time.Now()
		frac := 1.0
		if total > 0 {
			frac = float64(done) / float64(total)
		}
		line := fmt.Sprintf("quantize %3.0f%% %s/%s %.0fs", 100*frac, units.Bytes(done), units.Bytes(total), time.Since(start).Seconds())
		switch {
		case tty && finished:
			fmt.Fprintf(w, "\r%s\x1b[K\n", line)
		case tty:
			fmt.Fprintf(w, "\r%s\x1b[K", line)
		case finished || done > 0:
			fmt.Fprintln(w, line)
		}
	}
}

// typeCountList lists "Q4_K 96, F32 49", most tensors first.
func typeCountList(m map[string]int) string {
	parts := make([]string, 0, len(m))
	for _, k := range keysByCount(m) {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}
