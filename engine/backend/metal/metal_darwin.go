//go:build darwin

package metal

// The darwin runner: Metal.framework through purego's Objective-C
// runtime, with CGO_ENABLED=0 as with cgo. Nothing here has run on a Mac
// yet (see packaging/macos/README.md for the check that will); what it
// relies on:
//
//   - Every Metal call runs on one goroutine locked to its OS thread (the
//     executor), inside an autorelease pool pushed and popped there:
//     commandBuffer and computeCommandEncoder return autoreleased objects,
//     and pools belong to a thread.
//   - No ARC: every object this code gets from alloc/new…/copy, or
//     retains, it releases by hand, in close at the latest.
//   - MTLCompileOptions' languageVersion is set explicitly and read back:
//     a CGO_ENABLED=0 binary has no LC_BUILD_VERSION, and Metal's run-time
//     compiler then assumes an old language (golang/go#77917). Fast math
//     is off: the kernels divide and round as the CPU does.
//   - Buffers are in shared storage (unified memory); large weights are
//     the model file's mapped pages, wrapped by newBufferWithBytesNoCopy
//     (page-aligned, a whole number of pages, no deallocator: the model
//     owns the mapping and outlives the device).
//   - Dispatches are recorded in Go and encoded in batches into one
//     compute encoder per command buffer; wait commits and waits on the
//     last, then reads every committed buffer's status and error.

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
	"github.com/ebitengine/purego/objc"
)

// mtlSize is MTLSize.
type mtlSize struct {
	W, H, D uint64
}

var sel = struct {
	alloc, init, release, retain                                          objc.SEL
	name, recommendedMaxWorkingSetSize, maxBufferLength, hasUnifiedMemory objc.SEL
	supportsFamily, newCommandQueue                                       objc.SEL
	initWithUTF8String, utf8String, localizedDescription                  objc.SEL
	setLanguageVersion, languageVersion, setFastMathEnabled               objc.SEL
	setMathMode, setMathFloatingPointFunctions, respondsToSelector        objc.SEL
	newLibraryWithSource, newFunctionWithName, newComputePipelineState    objc.SEL
	maxTotalThreadsPerThreadgroup, threadExecutionWidth                   objc.SEL
	newBufferWithLength, newBufferWithBytesNoCopy, contents               objc.SEL
	commandBuffer, computeCommandEncoder, setComputePipelineState         objc.SEL
	setBytes, setBuffer, dispatchThreadgroups, endEncoding                objc.SEL
	commit, waitUntilCompleted, status, errorSel                          objc.SEL
}{}

var (
	mtlCreateSystemDefaultDevice uintptr
	autoreleasePoolPush          uintptr // void *objc_autoreleasePoolPush(void)
	autoreleasePoolPop           uintptr // void objc_autoreleasePoolPop(void *)
	msgSend                      uintptr // objc_msgSend, called directly on the encoding path
	loadErr                      error
)

func loadMetal() error {
	const metalPath = "/System/Library/Frameworks/Metal.framework/Metal"
	h, err := purego.Dlopen(metalPath, purego.RTLD_NOW|purego.RTLD_GLOBAL)
	if err != nil {
		return fmt.Errorf("no Metal framework (%s): %w", metalPath, err)
	}
	// A program that never linked CoreGraphics can get no device from
	// MTLCreateSystemDefaultDevice; loading it is harmless otherwise.
	_, _ = purego.Dlopen("/System/Library/Frameworks/CoreGraphics.framework/CoreGraphics", purego.RTLD_NOW|purego.RTLD_GLOBAL)
	if mtlCreateSystemDefaultDevice, err = purego.Dlsym(h, "MTLCreateSystemDefaultDevice"); err != nil {
		return fmt.Errorf("no MTLCreateSystemDefaultDevice in the Metal framework: %w", err)
	}
	lib, err := purego.Dlopen("/usr/lib/libobjc.A.dylib", purego.RTLD_NOW|purego.RTLD_GLOBAL)
	if err != nil {
		return fmt.Errorf("no Objective-C runtime: %w", err)
	}
	if msgSend, err = purego.Dlsym(lib, "objc_msgSend"); err != nil {
		return fmt.Errorf("Objective-C runtime: %w", err)
	}
	if autoreleasePoolPush, err = purego.Dlsym(lib, "objc_autoreleasePoolPush"); err != nil {
		return fmt.Errorf("Objective-C runtime: %w", err)
	}
	if autoreleasePoolPop, err = purego.Dlsym(lib, "objc_autoreleasePoolPop"); err != nil {
		return fmt.Errorf("Objective-C runtime: %w", err)
	}
	r := objc.RegisterName
	sel.alloc, sel.init, sel.release, sel.retain = r("alloc"), r("init"), r("release"), r("retain")
	sel.name, sel.recommendedMaxWorkingSetSize = r("name"), r("recommendedMaxWorkingSetSize")
	sel.maxBufferLength, sel.hasUnifiedMemory = r("maxBufferLength"), r("hasUnifiedMemory")
	sel.supportsFamily, sel.newCommandQueue = r("supportsFamily:"), r("newCommandQueue")
	sel.initWithUTF8String, sel.utf8String = r("initWithUTF8String:"), r("UTF8String")
	sel.localizedDescription = r("localizedDescription")
	sel.setLanguageVersion, sel.languageVersion = r("setLanguageVersion:"), r("languageVersion")
	sel.setFastMathEnabled = r("setFastMathEnabled:")
	sel.setMathMode, sel.setMathFloatingPointFunctions = r("setMathMode:"), r("setMathFloatingPointFunctions:")
	sel.respondsToSelector = r("respondsToSelector:")
	sel.newLibraryWithSource = r("newLibraryWithSource:options:error:")
	sel.newFunctionWithName = r("newFunctionWithName:")
	sel.newComputePipelineState = r("newComputePipelineStateWithFunction:error:")
	sel.maxTotalThreadsPerThreadgroup = r("maxTotalThreadsPerThreadgroup")
	sel.threadExecutionWidth = r("threadExecutionWidth")
	sel.newBufferWithLength = r("newBufferWithLength:options:")
	sel.newBufferWithBytesNoCopy = r("newBufferWithBytesNoCopy:length:options:deallocator:")
	sel.contents = r("contents")
	sel.commandBuffer, sel.computeCommandEncoder = r("commandBuffer"), r("computeCommandEncoder")
	sel.setComputePipelineState = r("setComputePipelineState:")
	sel.setBytes, sel.setBuffer = r("setBytes:length:atIndex:"), r("setBuffer:offset:atIndex:")
	sel.dispatchThreadgroups = r("dispatchThreadgroups:threadsPerThreadgroup:")
	sel.endEncoding, sel.commit, sel.waitUntilCompleted = r("endEncoding"), r("commit"), r("waitUntilCompleted")
	sel.status, sel.errorSel = r("status"), r("error")
	return nil
}

var loadOnce sync.Once

// nsString makes an NSString (+1: the caller releases it).
func nsString(s string) objc.ID {
	return objc.ID(objc.GetClass("NSString")).Send(sel.alloc).Send(sel.initWithUTF8String, s)
}

func fromNSString(s objc.ID) string {
	if s == 0 {
		return ""
	}
	return objc.Send[string](s, sel.utf8String)
}

// describe is an NSError's localizedDescription.
func describe(e objc.ID) string {
	if e == 0 {
		return "unknown error"
	}
	return fromNSString(e.Send(sel.localizedDescription))
}

// executor runs functions on one goroutine locked to its OS thread: the
// thread that owns the queue and its autorelease pools.
type executor struct {
	jobs chan func()
	done chan struct{}
}

func newExecutor() *executor {
	e := &executor{jobs: make(chan func()), done: make(chan struct{})}
	go func() {
		runtime.LockOSThread()
		for f := range e.jobs {
			pool, _, _ := purego.SyscallN(autoreleasePoolPush)
			f()
			purego.SyscallN(autoreleasePoolPop, pool)
			e.done <- struct{}{}
		}
		runtime.UnlockOSThread()
	}()
	return e
}

func (e *executor) do(f func()) {
	e.jobs <- f
	<-e.done
}

func (e *executor) stop() { close(e.jobs) }

// The MSL versions tried, newest first: MTLLanguageVersion3_0 (macOS 13)
// and 2.4 (macOS 12). The kernels need nothing newer than 2.4.
var languages = []struct {
	v    uint64
	name string
}{{0x30000, "3.0"}, {0x20004, "2.4"}}

const (
	mtlResourceStorageModeShared = 0 << 4
	mtlCommandBufferStatusError  = 5
	// batchDispatches is how many dispatches go into one command buffer
	// before it is committed, so the GPU starts while the host encodes.
	batchDispatches = 512
)

type mtlCmd struct {
	k      int
	grid   [3]uint32
	tg     [3]uint32
	np     int
	params [16]uint32
	nb     int
	binds  [10]bind
}

type darwinRunner struct {
	ex     *executor
	dev    objc.ID
	queue  objc.ID
	lib    objc.ID
	fns    []objc.ID
	pipes  []objc.ID
	in     Info
	cmds   []mtlCmd
	cbs    []objc.ID // committed, retained, not yet waited for
	closed bool
}

// openSystem opens the system's default Metal device.
func openSystem() (runner, error) {
	loadOnce.Do(func() { loadErr = loadMetal() })
	if loadErr != nil {
		return nil, loadErr
	}
	r := &darwinRunner{ex: newExecutor()}
	var err error
	r.ex.do(func() {
		d, _, _ := purego.SyscallN(mtlCreateSystemDefaultDevice)
		if d == 0 {
			err = errors.New("no Metal GPU found (MTLCreateSystemDefaultDevice returned none)")
			return
		}
		r.dev = objc.ID(d) // a new reference: released in close
		r.in.Name = fromNSString(r.dev.Send(sel.name))
		r.in.WorkingSet = int64(objc.Send[uint64](r.dev, sel.recommendedMaxWorkingSetSize))
		r.in.MaxBuffer = int64(objc.Send[uint64](r.dev, sel.maxBufferLength))
		r.in.Unified = objc.Send[bool](r.dev, sel.hasUnifiedMemory)
		for f := 1010; f >= 1001; f-- { // MTLGPUFamilyApple1 … Apple10
			if objc.Send[bool](r.dev, sel.supportsFamily, int64(f)) {
				r.in.Family = fmt.Sprintf("Apple%d", f-1000)
				break
			}
		}
		r.queue = r.dev.Send(sel.newCommandQueue)
		if r.queue == 0 {
			err = fmt.Errorf("no command queue on %s", r.in.Name)
		}
	})
	if err != nil {
		r.close()
		return nil, err
	}
	if !r.in.Unified {
		r.close()
		return nil, fmt.Errorf("%s has no unified memory (an Intel Mac's GPU), which this backend needs", r.in.Name)
	}
	return r, nil
}

func (r *darwinRunner) info() Info { return r.in }

// pipelines compiles the embedded source and makes a pipeline of each
// kernel.
func (r *darwinRunner) pipelines(names []string) error {
	var err error
	r.ex.do(func() {
		src := nsString(kernelSource)
		defer src.Send(sel.release)
		var errs []string
		for _, lang := range languages {
			opts := objc.ID(objc.GetClass("MTLCompileOptions")).Send(sel.alloc).Send(sel.init)
			opts.Send(sel.setLanguageVersion, lang.v)
			opts.Send(sel.setFastMathEnabled, false)
			// macOS 15 replaces fastMathEnabled by mathMode (Safe = 0) and
			// the precise library functions (Precise = 1) [values from
			// Apple's headers as remembered: unverified on a Mac].
			if objc.Send[bool](opts, sel.respondsToSelector, sel.setMathMode) {
				opts.Send(sel.setMathMode, int64(0))
				opts.Send(sel.setMathFloatingPointFunctions, int64(1))
			}
			got := objc.Send[uint64](opts, sel.languageVersion)
			var nserr objc.ID
			lib := r.dev.Send(sel.newLibraryWithSource, src, opts, unsafe.Pointer(&nserr))
			opts.Send(sel.release)
			if got != lang.v {
				errs = append(errs, fmt.Sprintf("MSL %s: the compiler kept version %#x", lang.name, got))
			}
			if lib != 0 {
				r.lib = lib
				r.in.Language = lang.name
				break
			}
			msg := describe(nserr)
			if i := strings.IndexByte(msg, '\n'); i > 0 && len(msg) > 300 {
				msg = msg[:i]
			}
			errs = append(errs, fmt.Sprintf("MSL %s: %s", lang.name, msg))
		}
		if r.lib == 0 {
			err = fmt.Errorf("the Metal kernels do not compile on %s (%s)", r.in.Name, strings.Join(errs, "; "))
			return
		}
		for _, n := range names {
			ns := nsString(n)
			fn := r.lib.Send(sel.newFunctionWithName, ns)
			ns.Send(sel.release)
			if fn == 0 {
				err = fmt.Errorf("the Metal kernels have no function %s", n)
				return
			}
			r.fns = append(r.fns, fn)
			var nserr objc.ID
			p := r.dev.Send(sel.newComputePipelineState, fn, unsafe.Pointer(&nserr))
			if p == 0 {
				err = fmt.Errorf("no Metal pipeline for %s (%s)", n, describe(nserr))
				return
			}
			r.pipes = append(r.pipes, p)
			// Every kernel runs threadgroups of up to 256 threads.
			if mt := objc.Send[uint64](p, sel.maxTotalThreadsPerThreadgroup); mt < 256 {
				err = fmt.Errorf("the Metal pipeline %s runs at most %d threads a threadgroup on %s, the kernels need 256", n, mt, r.in.Name)
				return
			}
			// The kernels' reductions are written for SIMD groups of 32.
			if w := objc.Send[uint64](p, sel.threadExecutionWidth); w != 32 {
				err = fmt.Errorf("%s runs SIMD groups of %d threads, the Metal kernels need 32", r.in.Name, w)
				return
			}
		}
	})
	return err
}

func (r *darwinRunner) alloc(n int) (rbuf, error) {
	var b rbuf
	r.ex.do(func() {
		id := r.dev.Send(sel.newBufferWithLength, uint64(n), uint64(mtlResourceStorageModeShared))
		if id == 0 {
			return
		}
		p := r.contents(id)
		b = rbuf{h: uintptr(id), p: p, n: n}
	})
	if b.h == 0 {
		return rbuf{}, fmt.Errorf("newBufferWithLength of %d MiB failed", n>>20)
	}
	return b, nil
}

// contents is a shared buffer's host address.
func (r *darwinRunner) contents(id objc.ID) unsafe.Pointer {
	return objc.Send[unsafe.Pointer](id, sel.contents)
}

func (r *darwinRunner) wrap(p unsafe.Pointer, n int) (rbuf, error) {
	var id objc.ID
	r.ex.do(func() {
		id = r.dev.Send(sel.newBufferWithBytesNoCopy, p, uint64(n), uint64(mtlResourceStorageModeShared), objc.ID(0))
	})
	if id == 0 {
		return rbuf{}, errNoWrap
	}
	return rbuf{h: uintptr(id), p: p, n: n}, nil
}

func (r *darwinRunner) free(b rbuf) {
	if b.h == 0 || r.closed {
		return
	}
	r.ex.do(func() { objc.ID(b.h).Send(sel.release) })
}

func (r *darwinRunner) dispatch(k int, grid, tg [3]uint32, params []uint32, binds []bind) {
	if len(params) > len(mtlCmd{}.params) || len(binds) > len(mtlCmd{}.binds) {
		panic(fmt.Sprintf("metal: %d arguments and %d buffers for a dispatch", len(params), len(binds)))
	}
	c := mtlCmd{k: k, grid: grid, tg: tg, np: len(params), nb: len(binds)}
	copy(c.params[:], params)
	copy(c.binds[:], binds)
	r.cmds = append(r.cmds, c)
	if len(r.cmds) >= batchDispatches {
		r.ex.do(r.encode)
	}
}

// encode puts the recorded dispatches into a command buffer and commits
// it. It runs on the executor.
func (r *darwinRunner) encode() {
	if len(r.cmds) == 0 {
		return
	}
	cb := r.queue.Send(sel.commandBuffer) // autoreleased: retained to outlive the pool
	cb.Send(sel.retain)
	enc := cb.Send(sel.computeCommandEncoder)
	for i := range r.cmds {
		c := &r.cmds[i]
		// Integer arguments only: objc_msgSend straight through SyscallN,
		// without the reflection of Send.
		purego.SyscallN(msgSend, uintptr(enc), uintptr(sel.setComputePipelineState), uintptr(r.pipes[c.k]))
		purego.SyscallN(msgSend, uintptr(enc), uintptr(sel.setBytes), uintptr(unsafe.Pointer(&c.params[0])), uintptr(4*max(c.np, 1)), 0)
		for j := range c.nb {
			purego.SyscallN(msgSend, uintptr(enc), uintptr(sel.setBuffer), c.binds[j].h, uintptr(c.binds[j].off), uintptr(j+1))
		}
		enc.Send(sel.dispatchThreadgroups,
			mtlSize{uint64(c.grid[0]), uint64(c.grid[1]), uint64(c.grid[2])},
			mtlSize{uint64(c.tg[0]), uint64(c.tg[1]), uint64(c.tg[2])})
	}
	enc.Send(sel.endEncoding)
	cb.Send(sel.commit)
	r.cbs = append(r.cbs, cb)
	r.cmds = r.cmds[:0]
}

func (r *darwinRunner) wait() error {
	var err error
	r.ex.do(func() {
		r.encode()
		if len(r.cbs) == 0 {
			return
		}
		r.cbs[len(r.cbs)-1].Send(sel.waitUntilCompleted)
		for _, cb := range r.cbs {
			cb.Send(sel.waitUntilCompleted) // done already: in order on one queue
			if err == nil && objc.Send[uint64](cb, sel.status) == mtlCommandBufferStatusError {
				err = errors.New(describe(cb.Send(sel.errorSel)))
			}
			cb.Send(sel.release)
		}
		r.cbs = r.cbs[:0]
	})
	return err
}

func (r *darwinRunner) close() {
	if r.closed {
		return
	}
	r.ex.do(func() {
		for _, p := range r.pipes {
			p.Send(sel.release)
		}
		for _, f := range r.fns {
			f.Send(sel.release)
		}
		if r.lib != 0 {
			r.lib.Send(sel.release)
		}
		if r.queue != 0 {
			r.queue.Send(sel.release)
		}
		if r.dev != 0 {
			r.dev.Send(sel.release)
		}
	})
	r.closed = true
	r.ex.stop()
}
