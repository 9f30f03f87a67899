package cli

import (
	"flag"
	"fmt"
	"io"
	"strings"
)

// newFlags makes a flag set whose errors come back as values.
func newFlags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("churon "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

// parse parses flags and allows them after positional arguments too
// ("churon tokenize TEXT -m model.gguf"), returning the positionals.
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// parseN is parse for a command that takes exactly n arguments: another
// count is a usage error saying so.
func parseN(fs *flag.FlagSet, args []string, n int, usage string) ([]string, error) {
	pos, err := parse(fs, args)
	if err == nil && len(pos) != n {
		err = usagef("%s", usage)
	}
	return pos, err
}

// newFlagsWithHelp is newFlags for a command whose -h prints its
// synopsis and a paragraph about it before the flags, instead of the flag
// package's bare flag list.
func newFlagsWithHelp(name string, stderr io.Writer, synopsis, about string) *flag.FlagSet {
	fs := newFlags(name, stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, synopsis)
		fmt.Fprintf(stderr, "\n%s\n\nFlags:\n", about)
		fs.PrintDefaults()
	}
	return fs
}

// givenFlags returns the names of the flags set on the command line, for
// the commands where a flag left out means something else than its
// default value.
func givenFlags(fs *flag.FlagSet) map[string]bool {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	return given
}

// textOrArgs is the text of a -p flag, or else the positional arguments
// joined, so that both `-p "a b"` and a bare `a b` work.
func textOrArgs(text string, pos []string) string {
	if text == "" {
		return strings.Join(pos, " ")
	}
	return text
}

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }
