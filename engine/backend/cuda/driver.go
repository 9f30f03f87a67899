//go:build linux || windows

package cuda

import (
	"fmt"
	"unsafe"

	"github.com/churon/churon/engine/backend"
	"github.com/ebitengine/purego"
)

// The driver API functions the backend calls, bound by name from the
// driver library (libcuda.so.1, nvcuda.dll). cuda.h #defines most of them
// to versioned names; these are the names the library exports. Each is
// in the NVIDIA driver since CUDA 11.0 (R450) at the latest.
type sym int

const (
	// CUresult cuInit(unsigned int Flags)
	cuInit sym = iota
	// CUresult cuDriverGetVersion(int *driverVersion)
	cuDriverGetVersion
	// CUresult cuDeviceGetCount(int *count)
	cuDeviceGetCount
	// CUresult cuDeviceGet(CUdevice *device, int ordinal)
	cuDeviceGet
	// CUresult cuDeviceGetName(char *name, int len, CUdevice dev)
	cuDeviceGetName
	// CUresult cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev)
	cuDeviceGetAttribute
	// CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)
	cuDeviceTotalMem
	// CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
	cuDevicePrimaryCtxRetain
	// CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev)
	cuDevicePrimaryCtxRelease
	// CUresult cuDevicePrimaryCtxReset_v2(CUdevice dev)
	cuDevicePrimaryCtxReset
	// CUresult cuCtxSetCurrent(CUcontext ctx)
	cuCtxSetCurrent
	// CUresult cuCtxSynchronize(void)
	cuCtxSynchronize
	// CUresult cuMemGetInfo_v2(size_t *free, size_t *total)
	cuMemGetInfo
	// CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
	cuMemAlloc
	// CUresult cuMemFree_v2(CUdeviceptr dptr)
	cuMemFree
	// CUresult cuMemAllocHost_v2(void **pp, size_t bytesize)
	cuMemAllocHost
	// CUresult cuMemFreeHost(void *p)
	cuMemFreeHost
	// CUresult cuMemcpyHtoD_v2(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount)
	cuMemcpyHtoD
	// CUresult cuMemcpyDtoH_v2(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount)
	cuMemcpyDtoH
	// CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount, CUstream hStream)
	cuMemcpyHtoDAsync
	// CUresult cuMemcpyDtoHAsync_v2(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream)
	cuMemcpyDtoHAsync
	// CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream)
	cuMemcpyDtoDAsync
	// CUresult cuMemsetD32Async(CUdeviceptr dstDevice, unsigned int ui, size_t N, CUstream hStream)
	cuMemsetD32Async
	// CUresult cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned int numOptions,
	//     CUjit_option *options, void **optionValues)
	cuModuleLoadDataEx
	// CUresult cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name)
	cuModuleGetFunction
	// CUresult cuModuleUnload(CUmodule hmod)
	cuModuleUnload
	// CUresult cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
	//     unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
	//     unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
	//     void **kernelParams, void **extra)
	cuLaunchKernel
	// CUresult cuStreamCreate(CUstream *phStream, unsigned int Flags)
	cuStreamCreate
	// CUresult cuStreamDestroy_v2(CUstream hStream)
	cuStreamDestroy
	// CUresult cuStreamSynchronize(CUstream hStream)
	cuStreamSynchronize
	// CUresult cuStreamWaitEvent(CUstream hStream, CUevent hEvent, unsigned int Flags)
	cuStreamWaitEvent
	// CUresult cuEventCreate(CUevent *phEvent, unsigned int Flags)
	cuEventCreate
	// CUresult cuEventDestroy_v2(CUevent hEvent)
	cuEventDestroy
	// CUresult cuEventRecord(CUevent hEvent, CUstream hStream)
	cuEventRecord
	// CUresult cuEventSynchronize(CUevent hEvent)
	cuEventSynchronize
	// CUresult cuEventElapsedTime(float *pMilliseconds, CUevent hStart, CUevent hEnd)
	cuEventElapsedTime
	// CUresult cuGetErrorName(CUresult error, const char **pStr)
	cuGetErrorName
	// CUresult cuGetErrorString(CUresult error, const char **pStr)
	cuGetErrorString
	numSyms
)

var symNames = [numSyms]string{
	cuInit: "cuInit", cuDriverGetVersion: "cuDriverGetVersion", cuDeviceGetCount: "cuDeviceGetCount",
	cuDeviceGet: "cuDeviceGet", cuDeviceGetName: "cuDeviceGetName", cuDeviceGetAttribute: "cuDeviceGetAttribute",
	cuDeviceTotalMem: "cuDeviceTotalMem_v2", cuDevicePrimaryCtxRetain: "cuDevicePrimaryCtxRetain",
	cuDevicePrimaryCtxRelease: "cuDevicePrimaryCtxRelease_v2", cuDevicePrimaryCtxReset: "cuDevicePrimaryCtxReset_v2",
	cuCtxSetCurrent: "cuCtxSetCurrent", cuCtxSynchronize: "cuCtxSynchronize", cuMemGetInfo: "cuMemGetInfo_v2",
	cuMemAlloc: "cuMemAlloc_v2", cuMemFree: "cuMemFree_v2", cuMemAllocHost: "cuMemAllocHost_v2",
	cuMemFreeHost: "cuMemFreeHost", cuMemcpyHtoD: "cuMemcpyHtoD_v2", cuMemcpyDtoH: "cuMemcpyDtoH_v2",
	cuMemcpyHtoDAsync: "cuMemcpyHtoDAsync_v2", cuMemcpyDtoHAsync: "cuMemcpyDtoHAsync_v2",
	cuMemcpyDtoDAsync: "cuMemcpyDtoDAsync_v2", cuMemsetD32Async: "cuMemsetD32Async",
	cuModuleLoadDataEx: "cuModuleLoadDataEx", cuModuleGetFunction: "cuModuleGetFunction",
	cuModuleUnload: "cuModuleUnload", cuLaunchKernel: "cuLaunchKernel", cuStreamCreate: "cuStreamCreate",
	cuStreamDestroy: "cuStreamDestroy_v2", cuStreamSynchronize: "cuStreamSynchronize",
	cuStreamWaitEvent: "cuStreamWaitEvent", cuEventCreate: "cuEventCreate", cuEventDestroy: "cuEventDestroy_v2",
	cuEventRecord: "cuEventRecord", cuEventSynchronize: "cuEventSynchronize",
	cuEventElapsedTime: "cuEventElapsedTime", cuGetErrorName: "cuGetErrorName", cuGetErrorString: "cuGetErrorString",
}

// Device attributes (CUdevice_attribute).
const (
	attrMaxThreadsPerBlock = 1
	attrMultiprocessors    = 16
	attrMemoryClockKHz     = 36
	attrMemoryBusWidth     = 37
	attrComputeMajor       = 75
	attrComputeMinor       = 76
)

// JIT options (CUjit_option).
const (
	jitInfoLogBuffer       = 3
	jitInfoLogBufferBytes  = 4
	jitErrorLogBuffer      = 5
	jitErrorLogBufferBytes = 6
)

// Result codes the backend tells apart (CUresult).
const (
	errInvalidValue        = 1
	errOutOfMemory         = 2
	errNoDevice            = 100
	errInvalidPTX          = 218
	errJITNotFound         = 221
	errUnsupportedPTX      = 222
	errJITDisabled         = 223
	errIllegalAddress      = 700
	errLaunchFailed        = 719
	errSystemDriverMismach = 803
	errCompatNotSupported  = 804
)

// driver is the loaded driver library. Its calls are made on the
// executor's thread of the context they concern; the library itself is
// shared by every context.
type driver struct {
	path string
	fn   [numSyms]uintptr
}

// LoadError says why the driver library could not be used.
type LoadError struct {
	Path string
	// Missing is the first symbol the library lacks ("" when it did not
	// load at all).
	Missing string
	Err     error
}

func (e *LoadError) Error() string {
	switch {
	case e.Missing == symNames[cuInit]:
		return fmt.Sprintf("%s is not the NVIDIA driver: it has no %s", e.Path, e.Missing)
	case e.Missing != "":
		return fmt.Sprintf("the NVIDIA driver is too old: %s has no %s (Churon needs a driver for CUDA 11.0, R450, or newer)", e.Path, e.Missing)
	}
	return fmt.Sprintf("no NVIDIA driver found: %v", e.Err)
}

func (e *LoadError) Unwrap() error { return e.Err }

// loadDriver opens the driver library at path and binds every symbol.
func loadDriver(path string) (*driver, error) {
	h, err := openLibrary(path)
	if err != nil {
		return nil, &LoadError{Path: path, Err: err}
	}
	d := &driver{path: path}
	for s := range numSyms {
		p, err := lookup(h, symNames[s])
		if err != nil || p == 0 {
			return nil, &LoadError{Path: path, Missing: symNames[s], Err: err}
		}
		d.fn[s] = p
	}
	return d, nil
}

// Error is a failed driver call: the function, its result code and the
// driver's name and description of the code.
type Error struct {
	Func string
	Code int
	Name string // "CUDA_ERROR_OUT_OF_MEMORY"
	Text string // "out of memory"
}

func (e *Error) Error() string {
	if e.Text != "" {
		return fmt.Sprintf("%s: %s (%s)", e.Func, e.Name, e.Text)
	}
	return fmt.Sprintf("%s: %s", e.Func, e.Name)
}

// Sticky reports whether the error leaves the context unusable: a kernel
// fault, after which every call fails until the context is destroyed.
func (e *Error) Sticky() bool {
	switch e.Code {
	case errIllegalAddress, errLaunchFailed, 702, 709, 710, 714, 715, 716, 717, 718, 720, 999:
		return true
	}
	return false
}

// Is makes errors.Is(err, backend.ErrOutOfMemory) hold for an allocation
// the device refused.
func (e *Error) Is(target error) bool {
	return e.Code == errOutOfMemory && target == backend.ErrOutOfMemory
}

// call calls s with args and turns a result other than CUDA_SUCCESS into
// an *Error naming s. Pointers to Go memory converted to uintptr in the
// call's arguments stay valid and in place until it returns, as for
// purego.SyscallN (the arguments escape to the heap).
//
//go:uintptrescapes
func (d *driver) call(s sym, args ...uintptr) error {
	r, _, _ := purego.SyscallN(d.fn[s], args...)
	if code := int32(r); code != 0 {
		return d.errorFor(symNames[s], int(code))
	}
	return nil
}

// errorFor describes code with the driver's own names for it.
func (d *driver) errorFor(fn string, code int) *Error {
	e := &Error{Func: fn, Code: code, Name: fmt.Sprintf("CUDA error %d", code)}
	var p uintptr
	if r, _, _ := purego.SyscallN(d.fn[cuGetErrorName], uintptr(code), uintptr(unsafe.Pointer(&p))); r == 0 && p != 0 {
		e.Name = cString(p)
	}
	p = 0
	if r, _, _ := purego.SyscallN(d.fn[cuGetErrorString], uintptr(code), uintptr(unsafe.Pointer(&p))); r == 0 && p != 0 {
		e.Text = cString(p)
	}
	return e
}

// cString copies a NUL-terminated string the driver owns.
func cString(p uintptr) string {
	base := *(*unsafe.Pointer)(unsafe.Pointer(&p))
	n := 0
	for n < 4096 && *(*byte)(unsafe.Add(base, n)) != 0 {
		n++
	}
	return string(unsafe.Slice((*byte)(base), n))
}

// hostBytes views n bytes of memory outside the Go heap (the driver's
// pinned allocations) at address p.
func hostBytes(p uintptr, n int) []byte {
	if n == 0 {
		return nil
	}
	base := *(*unsafe.Pointer)(unsafe.Pointer(&p))
	return unsafe.Slice((*byte)(base), n)
}
