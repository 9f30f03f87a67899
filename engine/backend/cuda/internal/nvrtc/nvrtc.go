//go:build linux

// Package nvrtc compiles Churon's CUDA C kernels to PTX with NVIDIA's
// run-time compiler library, loaded through purego: a development-time
// tool (go generate in engine/backend/cuda) and the check that the
// committed PTX is what the sources make. Nothing at run time uses it.
//
// NVRTC needs no host compiler and no CUDA headers: Debian's non-free
// libnvrtc11.2 package (CUDA 11.8, about 70 MB with its builtins) is all
// it takes.
package nvrtc

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"unsafe"

	"github.com/ebitengine/purego"
)

// ErrNotFound is wrapped when no NVRTC library can be loaded.
var ErrNotFound = errors.New("nvrtc: library not found")

// libraries are the sonames tried in order; $CHURON_NVRTC comes first.
var libraries = []string{"libnvrtc.so.11.2", "libnvrtc.so.12", "libnvrtc.so"}

// Lib is a loaded NVRTC.
type Lib struct {
	path string
	// nvrtcResult nvrtcVersion(int *major, int *minor)
	version uintptr
	// nvrtcResult nvrtcCreateProgram(nvrtcProgram *prog, const char *src,
	//     const char *name, int numHeaders, const char * const *headers,
	//     const char * const *includeNames)
	create uintptr
	// nvrtcResult nvrtcCompileProgram(nvrtcProgram prog, int numOptions,
	//     const char * const *options)
	compile uintptr
	// nvrtcResult nvrtcGetProgramLogSize(nvrtcProgram prog, size_t *logSizeRet)
	logSize uintptr
	// nvrtcResult nvrtcGetProgramLog(nvrtcProgram prog, char *log)
	log uintptr
	// nvrtcResult nvrtcGetPTXSize(nvrtcProgram prog, size_t *ptxSizeRet)
	ptxSize uintptr
	// nvrtcResult nvrtcGetPTX(nvrtcProgram prog, char *ptx)
	ptx uintptr
	// nvrtcResult nvrtcDestroyProgram(nvrtcProgram *prog)
	destroy uintptr
	// const char *nvrtcGetErrorString(nvrtcResult result)
	errString uintptr
}

// Load finds and loads NVRTC.
func Load() (*Lib, error) {
	names := libraries
	if p := os.Getenv("CHURON_NVRTC"); p != "" {
		names = append([]string{p}, names...)
	}
	var errs []string
	for _, name := range names {
		h, err := purego.Dlopen(name, purego.RTLD_NOW|purego.RTLD_LOCAL)
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		l := &Lib{path: name}
		for _, s := range []struct {
			name string
			p    *uintptr
		}{
			{"nvrtcVersion", &l.version}, {"nvrtcCreateProgram", &l.create}, {"nvrtcCompileProgram", &l.compile},
			{"nvrtcGetProgramLogSize", &l.logSize}, {"nvrtcGetProgramLog", &l.log}, {"nvrtcGetPTXSize", &l.ptxSize},
			{"nvrtcGetPTX", &l.ptx}, {"nvrtcDestroyProgram", &l.destroy}, {"nvrtcGetErrorString", &l.errString},
		} {
			if *s.p, err = purego.Dlsym(h, s.name); err != nil {
				return nil, fmt.Errorf("nvrtc: %s lacks %s: %w", name, s.name, err)
			}
		}
		return l, nil
	}
	return nil, fmt.Errorf("%w (tried %s; apt-get install libnvrtc11.2 from Debian non-free, or set CHURON_NVRTC)", ErrNotFound, strings.Join(errs, "; "))
}

// Version is NVRTC's version, "11.8".
func (l *Lib) Version() (string, error) {
	var major, minor int32
	if r, _, _ := purego.SyscallN(l.version, uintptr(unsafe.Pointer(&major)), uintptr(unsafe.Pointer(&minor))); int32(r) != 0 {
		return "", l.fail("nvrtcVersion", r)
	}
	return fmt.Sprintf("%d.%d", major, minor), nil
}

func (l *Lib) fail(sym string, r uintptr) error {
	s := "unknown error"
	if p, _, _ := purego.SyscallN(l.errString, r); p != 0 {
		s = goString(p)
	}
	return fmt.Errorf("nvrtc: %s: %s (%d)", sym, s, int32(r))
}

// cstrings holds NUL-terminated copies of Go strings and an array of
// pointers to them, pinned while C reads them.
type cstrings struct {
	bufs [][]byte
	ptrs []uintptr
	pin  runtime.Pinner
}

func newCStrings(ss []string) *cstrings {
	c := &cstrings{}
	for _, s := range ss {
		b := append([]byte(s), 0)
		c.pin.Pin(&b[0])
		c.bufs = append(c.bufs, b)
		c.ptrs = append(c.ptrs, uintptr(unsafe.Pointer(&b[0])))
	}
	if len(c.ptrs) > 0 {
		c.pin.Pin(&c.ptrs[0])
	}
	return c
}

func (c *cstrings) array() uintptr {
	if len(c.ptrs) == 0 {
		return 0
	}
	return uintptr(unsafe.Pointer(&c.ptrs[0]))
}

func (c *cstrings) at(i int) uintptr { return c.ptrs[i] }

// Compile compiles src (named name) with the given headers (include
// name → contents) and options, and returns the PTX. A compile error
// comes with NVRTC's log.
func (l *Lib) Compile(name, src string, headers map[string]string, options []string) (string, error) {
	var hnames, hsrc []string
	for n := range headers {
		hnames = append(hnames, n)
	}
	// The order of headers does not change the output, but keep it fixed.
	slices.Sort(hnames)
	for _, n := range hnames {
		hsrc = append(hsrc, headers[n])
	}
	strs := newCStrings(append([]string{src, name}, append(hsrc, hnames...)...))
	defer strs.pin.Unpin()
	nh := len(hnames)
	var hs, hn uintptr
	if nh > 0 {
		hs = uintptr(unsafe.Pointer(&strs.ptrs[2]))
		hn = uintptr(unsafe.Pointer(&strs.ptrs[2+nh]))
	}
	var prog uintptr
	if r, _, _ := purego.SyscallN(l.create, uintptr(unsafe.Pointer(&prog)), strs.at(0), strs.at(1), uintptr(nh), hs, hn); int32(r) != 0 {
		return "", l.fail("nvrtcCreateProgram", r)
	}
	defer purego.SyscallN(l.destroy, uintptr(unsafe.Pointer(&prog)))
	opts := newCStrings(options)
	defer opts.pin.Unpin()
	r, _, _ := purego.SyscallN(l.compile, prog, uintptr(len(options)), opts.array())
	if int32(r) != 0 {
		return "", fmt.Errorf("%w\n%s", l.fail("nvrtcCompileProgram", r), l.programLog(prog))
	}
	var n uintptr
	if r, _, _ := purego.SyscallN(l.ptxSize, prog, uintptr(unsafe.Pointer(&n))); int32(r) != 0 {
		return "", l.fail("nvrtcGetPTXSize", r)
	}
	buf := make([]byte, n)
	if n > 0 {
		if r, _, _ := purego.SyscallN(l.ptx, prog, uintptr(unsafe.Pointer(&buf[0]))); int32(r) != 0 {
			return "", l.fail("nvrtcGetPTX", r)
		}
	}
	return strings.TrimRight(string(buf), "\x00"), nil
}

func (l *Lib) programLog(prog uintptr) string {
	var n uintptr
	if r, _, _ := purego.SyscallN(l.logSize, prog, uintptr(unsafe.Pointer(&n))); int32(r) != 0 || n == 0 {
		return ""
	}
	buf := make([]byte, n)
	purego.SyscallN(l.log, prog, uintptr(unsafe.Pointer(&buf[0])))
	return strings.TrimRight(string(buf), "\x00")
}

// goString copies a NUL-terminated C string (memory NVRTC owns).
func goString(p uintptr) string {
	base := *(*unsafe.Pointer)(unsafe.Pointer(&p))
	n := 0
	for *(*byte)(unsafe.Add(base, n)) != 0 {
		n++
	}
	return string(unsafe.Slice((*byte)(base), n))
}
