// Package cli implements churon's headless subcommands. Each command
// parses its own flags, writes results to stdout (JSON with --json, in a
// documented, stable shape) and diagnostics to stderr.
package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"slices"
)

// Version information, set at build time with -ldflags.
var (
	Version = "0.1.0-dev"
	Commit  = "unknown"
	Date    = "unknown"
)

type command struct {
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

// stdin is where commands read their input (chat's lines, `import -`);
// tests replace it.
var stdin io.Reader = os.Stdin

// commands holds every subcommand. Each file of this package registers
// its own in an init function, so commands can be added without touching
// this one.
var commands = map[string]command{}

func register(name, summary string, run func(ctx context.Context, args []string, stdout, stderr io.Writer) error) {
	if _, dup := commands[name]; dup {
		panic("cli: command registered twice: " + name)
	}
	commands[name] = command{summary, run}
}

// Main runs the command line and returns the process exit code. With no
// arguments it returns -1 so that main can open the desktop app instead.
// Ctrl-C cancels the running command.
func Main(args []string) int {
	if len(args) == 0 {
		return -1
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	return Run(ctx, args, os.Stdout, os.Stderr)
}

// Run runs one command with the given output streams and returns its exit
// code: 0 success, 1 failure, 2 bad usage.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	switch args[0] {
	case "-h", "--help", "help":
		usage(stdout)
		return 0
	case "-v", "--version", "version":
		fmt.Fprintf(stdout, "churon %s (commit %s, built %s)\n", Version, Commit, Date)
		return 0
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "churon: unknown command %q\n\n", args[0])
		usage(stderr)
		return 2
	}
	if err := cmd.run(ctx, args[1:], stdout, stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		var ue usageError
		if errors.As(err, &ue) {
			fmt.Fprintf(stderr, "churon %s: %v\n", args[0], err)
			return 2
		}
		printError(stderr, args[0], err)
		return 1
	}
	return 0
}

type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

func usage(w io.Writer) {
	fmt.Fprintln(w, "Churon — chat with local language models.")
	fmt.Fprintln(w, "\nUsage:\n  churon                 open the desktop app\n  churon COMMAND [flags] run a headless command")
	fmt.Fprintln(w, "\nCommands:")
	for _, n := range slices.Sorted(maps.Keys(commands)) {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w, "\nRun 'churon COMMAND -h' for a command's flags; 'churon --version' for the version.")
}

// writeJSON writes v as one line of JSON. Prompts, answers and titles
// often hold <, > and &: they stay as typed instead of \u003c escapes.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
