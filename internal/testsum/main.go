// Command testsum reads `go test -json` on stdin and prints what people
// read from a plain `go test`: a line per package, and the whole output
// of every failed test and of every package that failed outside a test
// (a build error, a panic, a timeout). It adds the count of test
// functions passed and failed to a tally file, so that scripts/test can
// end, after several go test runs, with one line: "N passed, N failed".
//
//	go test -json ./... | testsum -tally FILE   # exit status 1 if anything failed
//	testsum -total FILE                         # prints "N passed, N failed"
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
)

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Action      string
	Package     string
	ImportPath  string // build-output and build-fail events
	FailedBuild string // a package's fail event: the build that failed
	Test        string
	Output      string
}

// counts are test functions: a subtest is part of its test, so that the
// summary counts what a person wrote, not how many cases a table has.
type counts struct{ passed, failed int }

// pkgState is what is kept of one package until it ends.
type pkgState struct {
	out   strings.Builder             // output outside any test
	tests map[string]*strings.Builder // output of each running test, subtests in their top-level test's
	// failed counts its failed tests, to tell a package that failed
	// outside them (a panic in TestMain, a timeout).
	failed int
}

func top(test string) string {
	name, _, _ := strings.Cut(test, "/")
	return name
}

// summarize reads events from r, writes the readable form to w and
// returns the counts.
func summarize(r io.Reader, w io.Writer) (counts, error) {
	var c counts
	pkgs := map[string]*pkgState{}
	builds := map[string]*strings.Builder{} // build output by ImportPath
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if err := json.Unmarshal(line, &e); err != nil || e.Action == "" {
			// Not an event (the go command's own words): pass it on.
			fmt.Fprintf(w, "%s\n", line)
			continue
		}
		switch e.Action {
		case "build-output":
			if builds[e.ImportPath] == nil {
				builds[e.ImportPath] = &strings.Builder{}
			}
			builds[e.ImportPath].WriteString(e.Output)
			continue
		case "build-fail":
			continue
		}
		p := pkgs[e.Package]
		if p == nil {
			p = &pkgState{tests: map[string]*strings.Builder{}}
			pkgs[e.Package] = p
		}
		switch {
		case e.Action == "output" && e.Test == "":
			p.out.WriteString(e.Output)
		case e.Action == "output":
			b := p.tests[top(e.Test)]
			if b == nil {
				b = &strings.Builder{}
				p.tests[top(e.Test)] = b
			}
			b.WriteString(e.Output)
		case e.Test != "" && strings.Contains(e.Test, "/"):
			// A subtest's verdict is part of its test's.
		case e.Test != "" && e.Action == "pass", e.Test != "" && e.Action == "skip":
			if e.Action == "pass" {
				c.passed++
			}
			delete(p.tests, e.Test)
		case e.Test != "" && e.Action == "fail":
			c.failed++
			p.failed++
			if b := p.tests[e.Test]; b != nil {
				io.WriteString(w, b.String())
			}
			delete(p.tests, e.Test)
		case e.Action == "pass", e.Action == "skip":
			// "ok  pkg 1.2s" or "?  pkg [no test files]": the package's
			// own last line says it as go test does.
			io.WriteString(w, lastLine(p.out.String()))
			delete(pkgs, e.Package)
		case e.Action == "fail":
			// In full: its build errors, the output of tests still running
			// when it died (a panic, a timeout), and whatever it printed
			// outside its tests.
			if b := builds[e.FailedBuild]; b != nil {
				io.WriteString(w, b.String())
				delete(builds, e.FailedBuild)
			}
			for _, n := range slices.Sorted(maps.Keys(p.tests)) {
				io.WriteString(w, p.tests[n].String())
			}
			io.WriteString(w, p.out.String())
			if e.FailedBuild != "" && !strings.Contains(p.out.String(), "FAIL") {
				fmt.Fprintf(w, "FAIL\t%s [build failed]\n", e.Package)
			}
			if p.failed == 0 {
				// It failed, but no test did: count the package, so that
				// a failing run never reads "0 failed".
				c.failed++
			}
			delete(pkgs, e.Package)
		}
	}
	if err := sc.Err(); err != nil {
		return c, fmt.Errorf("testsum: reading go test -json: %w", err)
	}
	// Build output no package claimed (go vet's, run by go test).
	for _, n := range slices.Sorted(maps.Keys(builds)) {
		io.WriteString(w, builds[n].String())
	}
	return c, nil
}

// lastLine is the last non-empty line of s, with its newline.
func lastLine(s string) string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return ""
	}
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return s + "\n"
}

// addTally adds c to the counts in the file at path ("passed failed").
func addTally(path string, c counts) error {
	old, err := readTally(path)
	if err != nil {
		return err
	}
	old.passed += c.passed
	old.failed += c.failed
	return os.WriteFile(path, fmt.Appendf(nil, "%d %d\n", old.passed, old.failed), 0o644)
}

func readTally(path string) (counts, error) {
	var c counts
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return c, fmt.Errorf("testsum: %w", err)
	}
	if len(strings.TrimSpace(string(data))) == 0 {
		return c, nil
	}
	if _, err := fmt.Sscan(string(data), &c.passed, &c.failed); err != nil {
		return c, fmt.Errorf("testsum: tally %s: %w", path, err)
	}
	return c, nil
}

func main() {
	tally := flag.String("tally", "", "add this run's counts to `file`")
	total := flag.String("total", "", "print the counts in `file` as \"N passed, N failed\" and exit")
	flag.Parse()
	if *total != "" {
		c, err := readTally(*total)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		fmt.Printf("%d passed, %d failed\n", c.passed, c.failed)
		return
	}
	c, err := summarize(os.Stdin, os.Stdout)
	if err == nil && *tally != "" {
		err = addTally(*tally, c)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if c.failed > 0 {
		os.Exit(1)
	}
}
