package gputwin

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// Emulator is a GPU backend's emulator (a driver, a runner): a shared
// library the host's C++ compiler builds from the backend's sources, once
// per version of them and of the compiler, into the user's cache, where
// every test process after finds it.
type Emulator struct {
	What    string   // in messages: "the emulated driver"
	Lib     string   // the library's file name: "libcuda.so.1"
	Dir     string   // the start of its cache folder's name: "fakecuda"
	Sources []string // the files it is built from, relative to the package
	Main    string   // the one compiled
	Flags   []string // the compiler's flags

	once sync.Once
	path string
	err  error
}

// Path is the built library's path, or skips t, saying why (what after
// "SKIP: "), where it cannot be built.
func (e *Emulator) Path(t testing.TB, what string) string {
	t.Helper()
	e.once.Do(func() {
		cache, err := os.UserCacheDir()
		if err != nil {
			cache = os.TempDir()
		}
		e.path, e.err = e.build(filepath.Join(cache, "churon-test"))
	})
	if e.err != nil {
		t.Skipf("SKIP: %s: %v", what, e.err)
	}
	return e.path
}

// cxx is the C++ compiler: $CXX, else g++, else clang++.
func cxx() (string, error) {
	if c := os.Getenv("CXX"); c != "" {
		return exec.LookPath(c)
	}
	for _, c := range []string{"g++", "clang++"} {
		if p, err := exec.LookPath(c); err == nil {
			return p, nil
		}
	}
	return "", errors.New("no C++ compiler: neither $CXX, g++ nor clang++ is on PATH")
}

// build compiles the library into dir, unless this version is there.
func (e *Emulator) build(dir string) (string, error) {
	cc, err := cxx()
	if err != nil {
		return "", err
	}
	h := sha256.New()
	fmt.Fprintln(h, cc)
	for _, f := range e.Sources {
		b, err := os.ReadFile(f)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s %d\n", f, len(b))
		h.Write(b)
	}
	out := filepath.Join(dir, e.Dir+"-"+hex.EncodeToString(h.Sum(nil))[:16], e.Lib)
	if _, err := os.Stat(out); err == nil {
		return out, nil
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return "", err
	}
	tmp := out + fmt.Sprintf(".%d.tmp", os.Getpid())
	cmd := exec.Command(cc, append(append(e.Flags[:len(e.Flags):len(e.Flags)], "-o", tmp), e.Main)...)
	if b, err := cmd.CombinedOutput(); err != nil {
		// clang knows warning flags gcc does not, which gcc mentions only
		// when something else is wrong: show everything.
		return "", fmt.Errorf("building %s with %s: %v\n%s", e.What, cc, err, b)
	}
	return out, os.Rename(tmp, out)
}
