package cli

import (
	"errors"
	"fmt"
	"github.com/churon/churon/app/api/openai"
	"io"
	"io/fs"
	"net"
	"os"
	"regexp"
	"strings"
	"syscall"

	"github.com/churon/churon/engine/arch"
	"github.com/churon/churon/engine/backend"
	"github.com/churon/churon/engine/gguf"
	"github.com/churon/churon/internal/units"
	"github.com/churon/churon/models/download"
)

// This file is where the command line words its errors for people: one
// line, the file's path said once, no chain of our package names. The
// services and the engine return typed errors (download.ErrUnreachable,
// gguf.IncompleteError, arch.UnknownArchitectureError, ...); message
// picks the words with errors.Is and errors.As. CHURON_DEBUG=1 prints the
// whole chain as well, for a bug report.

// modelFileError ties a model-loading error to the file it is about, so
// that message can name the file once even though the engine's and the
// session's wrappings each named it again.
type modelFileError struct {
	path string
	err  error
}

func (e *modelFileError) Error() string { return e.err.Error() }
func (e *modelFileError) Unwrap() error { return e.err }

// withPath marks err as an error about the model file path.
func withPath(path string, err error) error {
	if err == nil {
		return nil
	}
	return &modelFileError{path: path, err: err}
}

// message is the line a person reads for err.
func message(err error) string {
	path := "the model file"
	var mf *modelFileError
	if errors.As(err, &mf) {
		path = mf.path
	}
	var (
		incomplete *gguf.IncompleteError
		format     *gguf.FormatError
		unknown    *arch.UnknownArchitectureError
		unreach    *download.UnreachableError
		dns        *net.DNSError
		pathErr    *fs.PathError
	)
	var remoteErr *openai.Error
	switch {
	case errors.As(err, &remoteErr):
		return remoteErr.Error() // already one line for people
	case errors.As(err, &unreach):
		return fmt.Sprintf("cannot reach %s: check the internet connection%s", unreach.Host, unreachableWhy(err))
	case errors.As(err, &dns):
		return fmt.Sprintf("cannot reach %s: check the internet connection (the name does not resolve)", dns.Name)
	case errors.Is(err, syscall.ECONNREFUSED):
		return "cannot reach the server: check the internet connection (the connection was refused)"
	case errors.As(err, &incomplete):
		return fmt.Sprintf("%s is incomplete (%s of %s) — download it again", path, units.Bytes(incomplete.Size), units.Bytes(incomplete.Want))
	case errors.Is(err, gguf.ErrTruncated):
		return fmt.Sprintf("%s is incomplete — download it again", path)
	case errors.Is(err, gguf.ErrNotGGUF):
		return fmt.Sprintf("%s is not a model file (Churon reads GGUF files)", path)
	case errors.As(err, &unknown):
		return fmt.Sprintf("%s is a %q model, which Churon cannot run; it runs: %s", path, unknown.Name, strings.Join(unknown.Supported, ", "))
	case errors.Is(err, gguf.ErrUnsupportedVersion) && errors.As(err, &format):
		return fmt.Sprintf("%s is in a GGUF version Churon cannot read (%s)", path, format.Msg)
	case errors.As(err, &format):
		return fmt.Sprintf("%s is damaged or not a model Churon can read: %s: %s", path, format.Where, format.Msg)
	case errors.Is(err, backend.ErrOutOfMemory), errors.Is(err, syscall.ENOMEM):
		return fmt.Sprintf("not enough memory for %s: try a smaller model or quantization, a shorter context (-c), or --kv q8_0", path)
	case errors.As(err, &pathErr) && errors.Is(err, fs.ErrNotExist):
		return fmt.Sprintf("no such file: %s", pathErr.Path)
	case errors.As(err, &pathErr) && errors.Is(err, fs.ErrPermission):
		return fmt.Sprintf("not allowed to read %s", pathErr.Path)
	}
	return stripPackages(err.Error())
}

// unreachableWhy says in a few words what failed, for the line of an
// unreachable host.
func unreachableWhy(err error) string {
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return " (the name does not resolve)"
	}
	if errors.Is(err, syscall.ECONNREFUSED) {
		return " (the connection was refused)"
	}
	return ""
}

// ourPackages matches the "package: " prefixes that our errors carry for
// a developer reading a log, at the start of the message or of a wrapped
// part; a person reads the rest. Names that are also plain words in our
// messages ("models", "chat") are left alone.
var ourPackages = regexp.MustCompile(`(^|: )(download|hub|gguf|engine|session|library|arch|backend|store|fit|sample|export|compare|kvcache|quantize|tokenizer|header|remote|openai): `)

func stripPackages(s string) string {
	for {
		t := ourPackages.ReplaceAllString(s, "$1")
		if t == s {
			return s
		}
		s = t
	}
}

// printError writes err to stderr for the command name: one line for a
// person, and with CHURON_DEBUG set the whole chain after it.
func printError(w io.Writer, name string, err error) {
	fmt.Fprintf(w, "churon %s: %s\n", name, message(err))
	if os.Getenv("CHURON_DEBUG") != "" {
		fmt.Fprintf(w, "churon %s: details: %v\n", name, err)
	}
}
