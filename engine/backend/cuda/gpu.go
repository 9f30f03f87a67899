//go:build linux || windows

package cuda

import (
	_ "embed"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/churon/churon/engine/backend/internal/gpucommon"
)

//go:embed kernels.ptx
var kernelsPTX string

// ptxISA is the PTX ISA version kernels.ptx declares.
var ptxISA = func() string {
	if m := regexp.MustCompile(`(?m)^\.version (\d+\.\d+)$`).FindStringSubmatch(kernelsPTX); m != nil {
		return m[1]
	}
	return "?"
}()

// minCompute is the oldest GPU architecture the kernels run on: dp4a
// came with compute capability 6.1 (Pascal).
const minCompute = 61

// Info describes a GPU and its driver.
type Info struct {
	Name           string // "NVIDIA GeForce RTX 4070"
	Major, Minor   int    // compute capability
	Multiprocessor int
	TotalBytes     int64
	// CUDA is the driver's CUDA version, "12.4"; Driver the NVIDIA
	// driver's own version where it can be read ("550.54.14"), else "".
	CUDA, Driver string
	// BandwidthGBs is the memory bandwidth the memory clock and bus
	// width give (GB/s), 0 when the driver does not say.
	BandwidthGBs float64
	// Library is the driver library loaded.
	Library string
}

// Label is how people see the GPU: "NVIDIA GeForce RTX 4070 (sm_89,
// driver 550.54)".
func (in *Info) Label() string {
	v := "CUDA " + in.CUDA
	if in.Driver != "" {
		v = "driver " + shortVersion(in.Driver)
	}
	return fmt.Sprintf("%s (sm_%d%d, %s)", in.Name, in.Major, in.Minor, v)
}

// shortVersion keeps a driver version's first two parts: 550.54.14 → 550.54.
func shortVersion(v string) string {
	if p := strings.SplitN(v, ".", 3); len(p) == 3 {
		return p[0] + "." + p[1]
	}
	return v
}

// gpu is one device's primary context, shared by every Device on it:
// the executor that owns its thread, the loaded kernels, a pinned arena
// for launch parameters, and its failure once it has failed for good.
type gpu struct {
	drv     *driver
	exec    *executor
	ordinal int
	dev     uintptr // CUdevice
	ctx     uintptr // CUcontext
	mod     uintptr // CUmodule
	fn      [gpucommon.NumKernels]uintptr
	// args is pinned host memory: launch parameter values at args, the
	// pointer array cuLaunchKernel reads at args+argPtrs.
	args uintptr
	info Info

	refs int // Devices holding it, under gpusMu

	mu   sync.Mutex
	dead error // a sticky failure: every later operation fails with it
}

const (
	maxArgs  = 24
	argPtrs  = 8 * maxArgs
	argBytes = 16 * maxArgs
)

var (
	gpusMu sync.Mutex
	gpus   = map[int]*gpu{}
)

// deviceOrdinal is the GPU to use: $CHURON_CUDA_DEVICE, else the first
// (the driver orders them fastest first; CUDA_VISIBLE_DEVICES chooses
// among them).
func deviceOrdinal() (int, error) {
	s := os.Getenv("CHURON_CUDA_DEVICE")
	if s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("CHURON_CUDA_DEVICE=%q is not a device number", s)
	}
	return n, nil
}

// openGPU returns the context of GPU ordinal, making it on first use.
func openGPU(ordinal int) (*gpu, error) {
	gpusMu.Lock()
	defer gpusMu.Unlock()
	if g := gpus[ordinal]; g != nil && g.failure() == nil {
		g.refs++
		return g, nil
	}
	g := &gpu{exec: newExecutor(), ordinal: ordinal}
	var err error
	g.exec.do(func() { err = g.start() })
	if err != nil {
		g.exec.stop()
		return nil, err
	}
	g.refs = 1
	gpus[ordinal] = g
	return g, nil
}

// release drops a Device's hold; the last one destroys the context (and
// with it every allocation left) and stops the executor.
func (g *gpu) release() {
	gpusMu.Lock()
	defer gpusMu.Unlock()
	g.refs--
	if g.refs > 0 {
		return
	}
	if gpus[g.ordinal] == g {
		delete(gpus, g.ordinal)
	}
	g.exec.do(func() {
		if g.mod != 0 {
			_ = g.drv.call(cuModuleUnload, g.mod)
		}
		if g.args != 0 {
			_ = g.drv.call(cuMemFreeHost, g.args)
		}
		_ = g.drv.call(cuDevicePrimaryCtxRelease, g.dev)
		if g.failure() != nil {
			// A context that faulted stays faulted until reset; the next
			// model should get a working one.
			_ = g.drv.call(cuDevicePrimaryCtxReset, g.dev)
		}
	})
	g.exec.stop()
}

func (g *gpu) failure() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.dead
}

// fail records err when it is sticky: the context is lost for every
// Device on it.
func (g *gpu) fail(err error) {
	var ce *Error
	if errors.As(err, &ce) && ce.Sticky() {
		g.mu.Lock()
		if g.dead == nil {
			g.dead = err
		}
		g.mu.Unlock()
	}
}

// loadAnyDriver loads the first driver library that loads; the error is
// the first path's (the usual one), unless a later one exists but fails.
func loadAnyDriver() (*driver, error) {
	var first error
	for _, p := range driverPaths() {
		d, err := loadDriver(p)
		if err == nil {
			return d, nil
		}
		var le *LoadError
		if first == nil || (errors.As(err, &le) && le.Missing != "") {
			first = err
		}
	}
	return nil, first
}

// start loads the driver and the kernels and makes the context current
// on the executor's thread. It runs there.
func (g *gpu) start() error {
	d, err := loadAnyDriver()
	if err != nil {
		return err
	}
	g.drv = d
	if err := d.call(cuInit, 0); err != nil {
		return initError(err)
	}
	var ver, count int32
	if err := d.call(cuDriverGetVersion, uintptr(unsafe.Pointer(&ver))); err != nil {
		return err
	}
	g.info.CUDA = fmt.Sprintf("%d.%d", ver/1000, ver%1000/10)
	g.info.Library = d.path
	if err := d.call(cuDeviceGetCount, uintptr(unsafe.Pointer(&count))); err != nil {
		return err
	}
	if count == 0 {
		return errors.New("no NVIDIA GPU found (the driver sees none)")
	}
	if g.ordinal >= int(count) {
		return fmt.Errorf("CHURON_CUDA_DEVICE=%d, but the driver sees %d GPU(s)", g.ordinal, count)
	}
	var dev int32
	if err := d.call(cuDeviceGet, uintptr(unsafe.Pointer(&dev)), uintptr(g.ordinal)); err != nil {
		return err
	}
	g.dev = uintptr(dev)
	if err := g.describe(); err != nil {
		return err
	}
	if c := g.info.Major*10 + g.info.Minor; c < minCompute {
		return fmt.Errorf("%s (sm_%d%d) is older than Churon's kernels support: they need sm_%d (Pascal, 2016) or newer", g.info.Name, g.info.Major, g.info.Minor, minCompute)
	}
	if err := d.call(cuDevicePrimaryCtxRetain, uintptr(unsafe.Pointer(&g.ctx)), g.dev); err != nil {
		return fmt.Errorf("creating a context on %s: %w", g.info.Name, err)
	}
	if err := g.setup(); err != nil {
		_ = d.call(cuDevicePrimaryCtxRelease, g.dev)
		return err
	}
	return nil
}

// initError words cuInit's failures for people.
func initError(err error) error {
	var ce *Error
	if !errors.As(err, &ce) {
		return err
	}
	switch ce.Code {
	case errNoDevice:
		return fmt.Errorf("no NVIDIA GPU found (%w)", err)
	case 35: // CUDA_ERROR_INSUFFICIENT_DRIVER
		return fmt.Errorf("the NVIDIA driver is too old for its own CUDA library (%w)", err)
	case errSystemDriverMismach:
		return fmt.Errorf("the NVIDIA driver's library and kernel module are of different versions; a driver update needs a restart (%w)", err)
	case errCompatNotSupported:
		return fmt.Errorf("this GPU cannot use the installed CUDA compatibility driver (%w)", err)
	case 999:
		return fmt.Errorf("the NVIDIA driver did not start; is its kernel module loaded (does nvidia-smi work)? (%w)", err)
	}
	return fmt.Errorf("the NVIDIA driver did not start (%w)", err)
}

// describe reads the GPU's name, capabilities and memory.
func (g *gpu) describe() error {
	d := g.drv
	name := make([]byte, 256)
	if err := d.call(cuDeviceGetName, uintptr(unsafe.Pointer(&name[0])), uintptr(len(name)), g.dev); err != nil {
		return err
	}
	if i := strings.IndexByte(string(name), 0); i >= 0 {
		name = name[:i]
	}
	g.info.Name = strings.TrimSpace(string(name))
	attr := func(a int) int {
		var v int32
		if err := d.call(cuDeviceGetAttribute, uintptr(unsafe.Pointer(&v)), uintptr(a), g.dev); err != nil {
			return 0
		}
		return int(v)
	}
	g.info.Major, g.info.Minor = attr(attrComputeMajor), attr(attrComputeMinor)
	g.info.Multiprocessor = attr(attrMultiprocessors)
	if khz, bits := attr(attrMemoryClockKHz), attr(attrMemoryBusWidth); khz > 0 && bits > 0 {
		// double data rate: two transfers a clock
		g.info.BandwidthGBs = 2 * float64(khz) * 1e3 * float64(bits) / 8 / 1e9
	}
	var total uint64
	if err := d.call(cuDeviceTotalMem, uintptr(unsafe.Pointer(&total)), g.dev); err != nil {
		return err
	}
	g.info.TotalBytes = int64(total)
	if os.Getenv("CHURON_CUDA_LIBRARY") == "" {
		g.info.Driver = nvidiaDriverVersion()
	}
	return nil
}

// setup makes the context current, loads the kernels and the argument
// arena.
func (g *gpu) setup() error {
	d := g.drv
	if err := d.call(cuCtxSetCurrent, g.ctx); err != nil {
		return err
	}
	if err := d.call(cuMemAllocHost, uintptr(unsafe.Pointer(&g.args)), argBytes); err != nil {
		return fmt.Errorf("pinned memory for kernel arguments: %w", err)
	}
	ptrs := hostBytes(g.args+argPtrs, 8*maxArgs)
	for i := range maxArgs {
		putU64(ptrs[8*i:], uint64(g.args)+uint64(8*i))
	}
	if err := g.loadModule(); err != nil {
		return err
	}
	for k := range gpucommon.NumKernels {
		name := append([]byte(gpucommon.KernelNames[k]), 0)
		if err := d.call(cuModuleGetFunction, uintptr(unsafe.Pointer(&g.fn[k])), g.mod, uintptr(unsafe.Pointer(&name[0]))); err != nil {
			return fmt.Errorf("Churon's kernels lack %s: %w", gpucommon.KernelNames[k], err)
		}
	}
	return nil
}

// jitLogBytes is the room for each of the JIT's logs.
const jitLogBytes = 16 << 10

// loadModule JIT-compiles the embedded PTX (the driver caches the
// result, so the next start is fast) and turns its failures into a
// reason: a driver too old for the PTX, or the JIT's own error log.
func (g *gpu) loadModule() error {
	d := g.drv
	// The PTX, NUL-terminated, and the JIT's option arrays and logs, all
	// outside the Go heap.
	n := len(kernelsPTX) + 1 + 2*jitLogBytes + 64
	var host uintptr
	if err := d.call(cuMemAllocHost, uintptr(unsafe.Pointer(&host)), uintptr(n)); err != nil {
		return fmt.Errorf("pinned memory for the kernels: %w", err)
	}
	defer func() { _ = d.call(cuMemFreeHost, host) }()
	mem := hostBytes(host, n)
	copy(mem, kernelsPTX)
	mem[len(kernelsPTX)] = 0
	errLog := host + uintptr(len(kernelsPTX)+1)
	infoLog := errLog + jitLogBytes
	hostBytes(errLog, 1)[0] = 0
	opts := [4]int32{jitErrorLogBuffer, jitErrorLogBufferBytes, jitInfoLogBuffer, jitInfoLogBufferBytes}
	vals := [4]uintptr{errLog, jitLogBytes, infoLog, jitLogBytes}
	err := d.call(cuModuleLoadDataEx, uintptr(unsafe.Pointer(&g.mod)), host, uintptr(len(opts)),
		uintptr(unsafe.Pointer(&opts[0])), uintptr(unsafe.Pointer(&vals[0])))
	if err == nil {
		return nil
	}
	var ce *Error
	if errors.As(err, &ce) && ce.Code == errUnsupportedPTX {
		return fmt.Errorf("the NVIDIA driver (CUDA %s) is too old for Churon's kernels (PTX ISA %s); update the driver (%w)", g.info.CUDA, ptxISA, err)
	}
	log := strings.TrimSpace(cString(errLog))
	if i := strings.IndexByte(log, '\n'); i >= 0 {
		log = log[:i]
	}
	if log != "" {
		return fmt.Errorf("compiling Churon's kernels for %s failed: %s (%w)", g.info.Name, log, err)
	}
	return fmt.Errorf("compiling Churon's kernels for %s failed (%w)", g.info.Name, err)
}

func putU64(b []byte, v uint64) {
	_ = b[7]
	for i := range 8 {
		b[i] = byte(v >> (8 * i))
	}
}
