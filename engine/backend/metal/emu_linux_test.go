package metal

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/churon/churon/engine/backend"
	"github.com/churon/churon/engine/backend/internal/gputwin"
	"github.com/ebitengine/purego"
)

// The emulated runner (emu/fakemetal.cpp) runs kernels.metal, compiled
// as host C++ against emu/msl.h, on the CPU. Tests build it with the
// host's C++ compiler once per version of the sources and open the
// device on it; on a Mac the same tests run on Metal (metal_darwin_test.go).

// emu is the emulated runner.
var emu = gputwin.Emulator{
	What:    "the emulated runner",
	Lib:     "libfakemetal.so",
	Dir:     "fakemetal",
	Sources: []string{"emu/fakemetal.cpp", "emu/msl.h", "kernels.metal"},
	Main:    "emu/fakemetal.cpp",
	Flags: []string{"-std=c++17", "-O2", "-g", "-fPIC", "-shared", "-ffp-contract=off", "-fvisibility=hidden",
		"-Wall", "-Wno-attributes", "-Wno-unknown-pragmas", "-Wno-unused-function", "-Wno-unknown-attributes",
		"-I.", "-Iemu"},
}

// fakeLibrary returns the emulated runner's path, or skips the test (it
// says why) where it cannot be built.
func fakeLibrary(t testing.TB) string {
	t.Helper()
	return emu.Path(t, "no emulated Metal runner, the MSL kernels are NOT checked")
}

// emuLib is the loaded emulated runner; one per process (its state is
// global), opened once.
type emuLib struct {
	init     func() int32
	kernel   func(name string) int32
	alloc    func(n uintptr) unsafe.Pointer
	free     func(p uintptr)
	live     func() uintptr
	dispatch func(k int32, gx, gy, gz, tx, ty, tz uint32, params unsafe.Pointer, plen int32, bufs unsafe.Pointer, nbufs int32)
	wait     func(err unsafe.Pointer, n int32) int32
}

var (
	libOnce sync.Once
	lib     *emuLib
	libErr  error
)

func loadEmu(path string) (*emuLib, error) {
	libOnce.Do(func() {
		h, err := purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_LOCAL)
		if err != nil {
			libErr = err
			return
		}
		l := &emuLib{}
		purego.RegisterLibFunc(&l.init, h, "fm_init")
		purego.RegisterLibFunc(&l.kernel, h, "fm_kernel")
		purego.RegisterLibFunc(&l.alloc, h, "fm_alloc")
		purego.RegisterLibFunc(&l.free, h, "fm_free")
		purego.RegisterLibFunc(&l.live, h, "fm_live")
		purego.RegisterLibFunc(&l.dispatch, h, "fm_dispatch")
		purego.RegisterLibFunc(&l.wait, h, "fm_wait")
		lib = l
	})
	return lib, libErr
}

// emuRunner is the runner over the emulated library. Buffers' handles
// are their addresses; wrapped memory gets a handle of its own, so that
// two wraps of one page stay two buffers.
type emuRunner struct {
	l       *emuLib
	ids     []int32
	wrapped map[uintptr]uintptr // handle → address
	next    uintptr
	canWrap bool
	name    string
	ws      int64
	missing string // a kernel to pretend the library lacks
	bufs    []uintptr
}

func (r *emuRunner) info() Info {
	return Info{Name: r.name, WorkingSet: r.ws, MaxBuffer: 1 << 34, Language: "emulated (C++)", Unified: true}
}

func (r *emuRunner) pipelines(names []string) error {
	r.l.init()
	r.ids = make([]int32, len(names))
	for i, n := range names {
		r.ids[i] = r.l.kernel(n)
		if r.ids[i] < 0 || n == r.missing {
			return fmt.Errorf("the Metal kernels have no function %s", n)
		}
	}
	return nil
}

func (r *emuRunner) alloc(n int) (rbuf, error) {
	p := r.l.alloc(uintptr(n))
	if p == nil {
		return rbuf{}, errors.New("out of host memory")
	}
	return rbuf{h: uintptr(p), p: p, n: n}, nil
}

func (r *emuRunner) wrap(p unsafe.Pointer, n int) (rbuf, error) {
	if !r.canWrap {
		return rbuf{}, errNoWrap
	}
	r.next++
	h := uintptr(1)<<62 + r.next
	r.wrapped[h] = uintptr(p)
	return rbuf{h: h, p: p, n: n}, nil
}

func (r *emuRunner) free(b rbuf) {
	if _, ok := r.wrapped[b.h]; ok {
		delete(r.wrapped, b.h)
		return
	}
	r.l.free(b.h)
}

func (r *emuRunner) addr(b bind) uintptr {
	if p, ok := r.wrapped[b.h]; ok {
		return p + uintptr(b.off)
	}
	return b.h + uintptr(b.off)
}

func (r *emuRunner) dispatch(k int, grid, tg [3]uint32, params []uint32, binds []bind) {
	r.bufs = append(r.bufs[:0], 0)
	for _, b := range binds {
		r.bufs = append(r.bufs, r.addr(b))
	}
	var pp unsafe.Pointer
	if len(params) > 0 {
		pp = unsafe.Pointer(&params[0])
	}
	r.l.dispatch(r.ids[k], grid[0], grid[1], grid[2], tg[0], tg[1], tg[2], pp, int32(4*len(params)),
		unsafe.Pointer(&r.bufs[0]), int32(len(r.bufs)))
}

func (r *emuRunner) wait() error {
	buf := make([]byte, 512)
	if r.l.wait(unsafe.Pointer(&buf[0]), int32(len(buf))) != 0 {
		msg, _, _ := strings.Cut(string(buf), "\x00")
		return errors.New(msg)
	}
	return nil
}

func (r *emuRunner) close() {}

// emuOpts configure an emulated runner.
type emuOpts struct {
	wrap       bool   // wrap large matrices in place
	workingSet int64  // 0: 16 GiB
	missing    string // a kernel the library pretends not to have
}

// openEmu opens a device on the emulated runner; env sets
// CHURON_FAKEMETAL_* variables (see emu/fakemetal.cpp) for the test.
func openEmu(t testing.TB, o emuOpts, env ...string) *Device {
	t.Helper()
	for i := 0; i+1 < len(env); i += 2 {
		t.Setenv(env[i], env[i+1])
	}
	r, err := newEmuRunner(t, o)
	if err != nil {
		t.Fatal(err)
	}
	d, err := newDevice(r)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

func newEmuRunner(t testing.TB, o emuOpts) (*emuRunner, error) {
	l, err := loadEmu(fakeLibrary(t))
	if err != nil {
		return nil, err
	}
	ws := o.workingSet
	if ws == 0 {
		ws = 16 << 30
	}
	return &emuRunner{l: l, wrapped: map[uintptr]uintptr{}, canWrap: o.wrap, name: "Apple M0 (emulated)", ws: ws, missing: o.missing}, nil
}

// openTest opens the device the kernel tests run on.
func openTest(t testing.TB, env ...string) *Device { return openEmu(t, emuOpts{}, env...) }

// useEmu makes New (and so the registered "metal" backend) open devices
// on the emulated runner for the rest of the test.
func useEmu(t testing.TB, o emuOpts, env ...string) {
	t.Helper()
	for i := 0; i+1 < len(env); i += 2 {
		t.Setenv(env[i], env[i+1])
	}
	fakeLibrary(t)
	old := openRunner
	openRunner = func() (runner, error) { return newEmuRunner(t, o) }
	t.Cleanup(func() { openRunner = old })
}

// useTestBackend makes the registered "metal" backend the device the
// engine tests load models on: the emulated runner here.
func useTestBackend(t testing.TB) { useEmu(t, emuOpts{wrap: true}) }

// The tests register the backend here too (probe.go registers it on
// macOS only): New, which the tests point at the emulated runner.
func init() {
	backend.Register("metal", backend.ProbeOf(New))
}
