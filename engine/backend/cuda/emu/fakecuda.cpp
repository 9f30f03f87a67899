// fakecuda.cpp: an emulated NVIDIA driver (libcuda.so.1) for tests on
// machines without a GPU. It implements the driver API symbols that
// engine/backend/cuda binds, with the semantics that backend relies on,
// and runs Churon's own kernels (kernels/kernels.cu, compiled into this
// library as host C++) on the CPU when they are launched.
//
// It is test support, built by the tests with the host's C++ compiler
// (emu_test.go); nothing ships it. What it checks and what it cannot:
//
//   - Work queues: launches, asynchronous copies, memsets and event
//     records run in submission order, but only when the host waits
//     (stream, event or context synchronisation, a synchronous copy, a
//     free). A host buffer given to an asynchronous copy is read or
//     written then, as a DMA engine would: a backend that reuses it early
//     gets wrong results. All streams share one queue, so ordering
//     between streams is stricter than a GPU's.
//   - Memory: allocations are fresh pages filled with 0xff (NaN as float
//     and as half: cuMemAlloc does not zero), each followed by an
//     inaccessible guard page, so a kernel that reads past its buffer
//     faults. Reads before a buffer are not caught.
//   - Launches: grid and block limits, parameter counts; the alignment of
//     every load and store of a block's contents (ALIGNED); inside a block,
//     barriers that can never complete (a divergent __syncthreads, a
//     shuffle with lanes that exited) fail the launch with
//     CUDA_ERROR_LAUNCH_FAILED. Threads run one at a time in lane order
//     (or reversed: CHURON_FAKECUDA_ORDER=reverse), so a missing barrier
//     shows as a difference between the two orders, not as a race.
//   - Modules: the image must be PTX whose .version the emulated driver
//     supports (CUDA_ERROR_UNSUPPORTED_PTX_VERSION otherwise) and whose
//     .target the emulated GPU can run; a kernel is found only if the PTX
//     has its .entry and this library has its code.
//   - Faults: CHURON_FAKECUDA_FAULT_AFTER=N fails the Nth launch with
//     CUDA_ERROR_ILLEGAL_ADDRESS, sticky as on a GPU.
//
// Not emulated: timing, occupancy, the memory model between blocks and
// between threads (there are no concurrent threads), atomics, the GPU's
// own rounding of library functions (expf, tanh, exp, sqrt run as the
// host's), FMA contraction by ptxas, shared-memory and register limits.
//
// Configuration, read by cuInit (device) and when the primary context is
// created (the rest):
//   CHURON_FAKECUDA_INIT_ERROR  cuInit returns this code
//   CHURON_FAKECUDA_DEVICES     number of devices (1; 0 = none)
//   CHURON_FAKECUDA_DRIVER      cuDriverGetVersion (12040)
//   CHURON_FAKECUDA_CC          compute capability ×10 (89)
//   CHURON_FAKECUDA_MEMORY      device memory in bytes (8 GiB)
//   CHURON_FAKECUDA_FAULT_AFTER fail the Nth launch (0: never)
//   CHURON_FAKECUDA_JIT_ERROR   fail module loads with this log text
//   CHURON_FAKECUDA_ORDER       "reverse": run threads and blocks backwards
//   CHURON_FAKECUDA_SYNC        1: run work when it is queued (to tell an
//                               ordering bug from an arithmetic one)
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "emu.h"

#if !defined(__x86_64__)
#include <ucontext.h>
#endif

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;

enum {
	OK = 0,
	ERR_INVALID_VALUE = 1,
	ERR_OUT_OF_MEMORY = 2,
	ERR_NOT_INITIALIZED = 3,
	ERR_NO_DEVICE = 100,
	ERR_INVALID_DEVICE = 101,
	ERR_INVALID_IMAGE = 200,
	ERR_INVALID_CONTEXT = 201,
	ERR_NO_BINARY_FOR_GPU = 209,
	ERR_INVALID_PTX = 218,
	ERR_UNSUPPORTED_PTX_VERSION = 222,
	ERR_INVALID_HANDLE = 400,
	ERR_NOT_FOUND = 500,
	ERR_ILLEGAL_ADDRESS = 700,
	ERR_LAUNCH_OUT_OF_RESOURCES = 701,
	ERR_LAUNCH_FAILED = 719,
};

namespace {

std::recursive_mutex mu;

long env_long(const char* name, long def) {
	const char* v = getenv(name);
	if (!v || !*v) return def;
	return strtol(v, nullptr, 10);
}

struct Config {
	long devices = 1, driver = 12040, cc = 89, fault_after = 0;
	size_t memory = size_t(8) << 30;
	bool reverse = false, immediate = false;
	std::string jit_error;
} cfg;

bool initialized = false;
int ctx_refs = 0;
CUresult sticky = OK;
size_t used = 0;
long launches = 0;
std::map<CUdeviceptr, size_t> allocs;  // device pointer → mapped length

struct Fiber;

}  // namespace

// ---------------------------------------------------------------------
// Fibers: the threads of one block.

namespace emu {

enum State { READY, WAIT_BLOCK, WAIT_WARP, DONE };

struct Thread {
	uint3 tid;
	int lane = 0, warp = 0;
	State state = READY;
	void* sp = nullptr;
	u64 slot = 0;
};

struct Run {
	Invoker inv = nullptr;
	void** params = nullptr;
	uint3 bidx{}, bdim{}, gdim{};
	std::vector<Thread> threads;
	std::vector<int> warp_live, warp_arrived;
	int live = 0, block_arrived = 0;
	Thread* current = nullptr;
	void* sched_sp = nullptr;
	std::string error;
};

static thread_local Run* run = nullptr;

const size_t stack_size = 64 << 10;
static std::vector<char*> stacks;

extern "C" void emu_swap(void** save, void* to);

#if defined(__x86_64__)
// emu_swap saves the callee-saved registers on the current stack, stores
// its stack pointer in *save and continues on the stack to, which
// emu_swap saved the same way (or fiber_stack prepared).
asm(R"(
	.text
	.globl emu_swap
	.type emu_swap, @function
emu_swap:
	pushq %rbp
	pushq %rbx
	pushq %r12
	pushq %r13
	pushq %r14
	pushq %r15
	movq %rsp, (%rdi)
	movq %rsi, %rsp
	popq %r15
	popq %r14
	popq %r13
	popq %r12
	popq %rbx
	popq %rbp
	ret
	.size emu_swap, .-emu_swap
)");
#endif

static void fiber_main();

#if defined(__x86_64__)
static void* fiber_stack(char* stack) {
	uintptr_t top = ((uintptr_t)(stack + stack_size)) & ~(uintptr_t)15;
	void** sp = (void**)top;
	*--sp = nullptr;  // where fiber_main's return address would be
	*--sp = (void*)&fiber_main;
	for (int i = 0; i < 6; i++) *--sp = nullptr;
	return sp;
}
static void to_fiber(Thread& t) { emu_swap(&run->sched_sp, t.sp); }
static void to_sched(Thread& t) { emu_swap(&t.sp, run->sched_sp); }
#else
static std::vector<ucontext_t> uctx;
static ucontext_t sched_uc;
static void* fiber_stack(char* stack) { return stack; }
static void to_fiber(Thread& t) {
	size_t i = &t - &run->threads[0];
	swapcontext(&sched_uc, &uctx[i]);
}
static void to_sched(Thread& t) {
	size_t i = &t - &run->threads[0];
	swapcontext(&uctx[i], &sched_uc);
}
#endif

Thread* cur() { return run->current; }

void misaligned(const void* p, int n) {
	if (run->error.empty()) {
		char buf[96];
		snprintf(buf, sizeof buf, "a %d-byte access at %p, which is not %d-byte aligned", n, p, n);
		run->error = buf;
	}
}
const uint3& thread_idx(Thread* t) { return t->tid; }
const uint3& block_idx() { return run->bidx; }
const uint3& block_dim() { return run->bdim; }
const uint3& grid_dim() { return run->gdim; }
int lane() { return run->current->lane; }

// release_block wakes the block's waiting threads once every live thread
// has arrived.
static void release_block() {
	if (run->block_arrived == 0 || run->block_arrived < run->live) return;
	run->block_arrived = 0;
	for (auto& t : run->threads)
		if (t.state == WAIT_BLOCK) t.state = READY;
}

static void release_warp(int w) {
	if (run->warp_arrived[w] == 0 || run->warp_arrived[w] < run->warp_live[w]) return;
	run->warp_arrived[w] = 0;
	for (auto& t : run->threads)
		if (t.warp == w && t.state == WAIT_WARP) t.state = READY;
}

void sync_block() {
	Thread& t = *run->current;
	run->block_arrived++;
	t.state = WAIT_BLOCK;
	release_block();
	if (t.state != READY) to_sched(t);
}

static void sync_warp() {
	Thread& t = *run->current;
	run->warp_arrived[t.warp]++;
	t.state = WAIT_WARP;
	release_warp(t.warp);
	if (t.state != READY) to_sched(t);
}

u64 exchange(u64 v, int src) {
	Thread& t = *run->current;
	t.slot = v;
	sync_warp();
	size_t si = (size_t)t.warp * 32 + (size_t)src;
	u64 r = v;
	if (src < 0 || src > 31 || si >= run->threads.size() || run->threads[si].state == DONE) {
		if (run->error.empty()) run->error = "a warp shuffle read a lane that does not exist or has exited";
	} else {
		r = run->threads[si].slot;
	}
	sync_warp();
	return r;
}

static void fiber_main() {
	Thread& t = *run->current;
	run->inv(run->params);
	t.state = DONE;
	run->live--;
	run->warp_live[t.warp]--;
	release_block();
	release_warp(t.warp);
	to_sched(t);
	abort();  // a finished fiber is never resumed
}

#if !defined(__x86_64__)
static void fiber_entry() { fiber_main(); }
#endif

// run_block runs one block to the end, or until its threads can make no
// progress.
static void run_block() {
	size_t n = run->threads.size();
	while (stacks.size() < n) {
		void* p = mmap(nullptr, stack_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED) {
			run->error = "out of host memory for fiber stacks";
			return;
		}
		stacks.push_back((char*)p);
	}
#if !defined(__x86_64__)
	uctx.resize(n);
#endif
	int nw = (int)((n + 31) / 32);
	run->warp_live.assign(nw, 0);
	run->warp_arrived.assign(nw, 0);
	for (size_t i = 0; i < n; i++) {
		Thread& t = run->threads[i];
		t.state = READY;
		t.lane = (int)(i % 32);
		t.warp = (int)(i / 32);
		run->warp_live[t.warp]++;
#if defined(__x86_64__)
		t.sp = fiber_stack(stacks[i]);
#else
		getcontext(&uctx[i]);
		uctx[i].uc_stack.ss_sp = stacks[i];
		uctx[i].uc_stack.ss_size = stack_size;
		uctx[i].uc_link = nullptr;
		makecontext(&uctx[i], fiber_entry, 0);
#endif
	}
	run->live = (int)n;
	run->block_arrived = 0;
	while (run->live > 0 && run->error.empty()) {
		bool progress = false;
		for (size_t k = 0; k < n && run->error.empty(); k++) {
			size_t i = cfg.reverse ? n - 1 - k : k;
			Thread& t = run->threads[i];
			if (t.state != READY) continue;
			run->current = &t;
			to_fiber(t);
			progress = true;
		}
		if (!progress && run->error.empty()) {
			int wb = 0, ww = 0;
			for (auto& t : run->threads) wb += t.state == WAIT_BLOCK, ww += t.state == WAIT_WARP;
			char buf[160];
			snprintf(buf, sizeof buf,
			         "barrier deadlock: %d threads wait at __syncthreads and %d at a warp shuffle, %d have exited", wb, ww,
			         (int)n - run->live);
			run->error = buf;
		}
	}
}

struct Kernel {
	std::string name;
	Invoker inv;
	std::vector<int> sizes;
};

static std::map<std::string, Kernel>& kernels() {
	static std::map<std::string, Kernel> k;
	return k;
}

void register_kernel(const char* name, Invoker inv, int nparams, const int* sizes) {
	kernels()[name] = Kernel{name, inv, std::vector<int>(sizes, sizes + nparams)};
}

}  // namespace emu

// The kernels, compiled for the host.
#include "kernels.cu"

// ---------------------------------------------------------------------
// The work queue.

namespace {

struct Event {
	bool recorded = false;
	double ms = 0;
};

struct Module {
	std::set<std::string> entries;
};

std::vector<std::function<void()>> queue;

double now_ms() {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

bool is_sticky(CUresult r) { return r == ERR_ILLEGAL_ADDRESS || r == ERR_LAUNCH_FAILED; }

// flush runs the queue; the first failure becomes the sticky error and
// drops what follows.
CUresult flush() {
	std::vector<std::function<void()>> q;
	q.swap(queue);
	for (auto& op : q) {
		if (sticky != OK) break;
		op();
	}
	return sticky;
}

void enqueue(std::function<void()> op) {
	queue.push_back(std::move(op));
	if (cfg.immediate) flush();
}

// device_range reports whether [p, p+n) lies inside one allocation.
bool device_range(CUdeviceptr p, size_t n) {
	auto it = allocs.upper_bound(p);
	if (it == allocs.begin()) return false;
	--it;
	return p >= it->first && p + n <= it->first + it->second;
}

void run_launch(const emu::Kernel* k, std::vector<std::vector<unsigned char>> vals, emu::uint3 grid, emu::uint3 block) {
	launches++;
	if (cfg.fault_after > 0 && launches >= cfg.fault_after) {
		fprintf(stderr, "fakecuda: injected fault at launch %ld (%s)\n", launches, k->name.c_str());
		sticky = ERR_ILLEGAL_ADDRESS;
		return;
	}
	std::vector<void*> ptrs(vals.size());
	for (size_t i = 0; i < vals.size(); i++) ptrs[i] = vals[i].data();
	emu::Run r;
	r.inv = k->inv;
	r.params = ptrs.data();
	r.gdim = grid;
	r.bdim = block;
	size_t nt = (size_t)block.x * block.y * block.z;
	r.threads.resize(nt);
	for (unsigned z = 0; z < block.z; z++)
		for (unsigned y = 0; y < block.y; y++)
			for (unsigned x = 0; x < block.x; x++) {
				size_t i = ((size_t)z * block.y + y) * block.x + x;
				r.threads[i].tid = emu::uint3{x, y, z};
			}
	emu::Run* saved = emu::run;
	emu::run = &r;
	size_t nb = (size_t)grid.x * grid.y * grid.z;
	for (size_t b = 0; b < nb && r.error.empty(); b++) {
		size_t bi = cfg.reverse ? nb - 1 - b : b;
		r.bidx = emu::uint3{(unsigned)(bi % grid.x), (unsigned)(bi / grid.x % grid.y), (unsigned)(bi / grid.x / grid.y)};
		emu::run_block();
	}
	emu::run = saved;
	if (!r.error.empty()) {
		fprintf(stderr, "fakecuda: %s: block (%u,%u,%u): %s\n", k->name.c_str(), r.bidx.x, r.bidx.y, r.bidx.z,
		        r.error.c_str());
		sticky = ERR_LAUNCH_FAILED;
	}
}

struct ErrName {
	int code;
	const char *name, *text;
};

const ErrName err_names[] = {
    {OK, "CUDA_SUCCESS", "no error"},
    {ERR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {ERR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {ERR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
    {ERR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {ERR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
    {ERR_INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid"},
    {ERR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
    {ERR_NO_BINARY_FOR_GPU, "CUDA_ERROR_NO_BINARY_FOR_GPU", "no kernel image is available for execution on the device"},
    {ERR_INVALID_PTX, "CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed"},
    {ERR_UNSUPPORTED_PTX_VERSION, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
     "the provided PTX was compiled with an unsupported toolchain."},
    {ERR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
    {ERR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {ERR_ILLEGAL_ADDRESS, "CUDA_ERROR_ILLEGAL_ADDRESS", "an illegal memory access was encountered"},
    {ERR_LAUNCH_OUT_OF_RESOURCES, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", "too many resources requested for launch"},
    {ERR_LAUNCH_FAILED, "CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure"},
};

// max_ptx_isa is the newest PTX ISA (×10) a driver of CUDA version v
// (1000·major + 10·minor) can JIT, from NVIDIA's PTX ISA release notes.
int max_ptx_isa(long v) {
	static const long table[][2] = {{11000, 70}, {11010, 71}, {11020, 72}, {11030, 73}, {11040, 74},
	                                {11050, 75}, {11060, 76}, {11070, 77}, {11080, 78}, {12000, 80},
	                                {12010, 81}, {12020, 82}, {12030, 83}, {12040, 84}, {12050, 85},
	                                {12060, 85}, {12080, 87}, {12090, 88}, {13000, 90}};
	int best = 63;  // CUDA 10.x
	for (auto& e : table)
		if (v >= e[0]) best = (int)e[1];
	return best;
}

}  // namespace

#define API extern "C" __attribute__((visibility("default")))
#define GUARD                                    \
	std::lock_guard<std::recursive_mutex> lk(mu); \
	if (!initialized) return ERR_NOT_INITIALIZED;
#define GUARD_CTX                            \
	GUARD if (ctx_refs == 0) return ERR_INVALID_CONTEXT; \
	if (sticky != OK) return sticky;

API CUresult cuInit(unsigned flags) {
	std::lock_guard<std::recursive_mutex> lk(mu);
	if (flags != 0) return ERR_INVALID_VALUE;
	long e = env_long("CHURON_FAKECUDA_INIT_ERROR", 0);
	if (e != 0) return (CUresult)e;
	cfg.devices = env_long("CHURON_FAKECUDA_DEVICES", 1);
	cfg.driver = env_long("CHURON_FAKECUDA_DRIVER", 12040);
	cfg.cc = env_long("CHURON_FAKECUDA_CC", 89);
	if (cfg.devices <= 0) return ERR_NO_DEVICE;
	initialized = true;
	return OK;
}

API CUresult cuDriverGetVersion(int* v) {
	std::lock_guard<std::recursive_mutex> lk(mu);
	if (!v) return ERR_INVALID_VALUE;
	*v = (int)env_long("CHURON_FAKECUDA_DRIVER", 12040);
	return OK;
}

API CUresult cuDeviceGetCount(int* n) {
	GUARD;
	*n = (int)cfg.devices;
	return OK;
}

API CUresult cuDeviceGet(CUdevice* d, int ordinal) {
	GUARD;
	if (ordinal < 0 || ordinal >= cfg.devices) return ERR_INVALID_DEVICE;
	*d = ordinal;
	return OK;
}

API CUresult cuDeviceGetName(char* name, int len, CUdevice d) {
	GUARD;
	if (d < 0 || d >= cfg.devices) return ERR_INVALID_DEVICE;
	snprintf(name, (size_t)len, "Churon emulated GPU");
	return OK;
}

API CUresult cuDeviceGetAttribute(int* v, int attr, CUdevice d) {
	GUARD;
	if (d < 0 || d >= cfg.devices) return ERR_INVALID_DEVICE;
	switch (attr) {
	case 1: *v = 1024; break;               // max threads per block
	case 8: *v = 48 << 10; break;           // shared memory per block
	case 10: *v = 32; break;                // warp size
	case 16: *v = 4; break;                 // multiprocessors
	case 36: *v = 1000000; break;           // memory clock, kHz
	case 37: *v = 128; break;               // bus width, bits
	case 75: *v = (int)(cfg.cc / 10); break;
	case 76: *v = (int)(cfg.cc % 10); break;
	default: *v = 0;
	}
	return OK;
}

API CUresult cuDeviceTotalMem_v2(size_t* bytes, CUdevice d) {
	GUARD;
	if (d < 0 || d >= cfg.devices) return ERR_INVALID_DEVICE;
	*bytes = (size_t)env_long("CHURON_FAKECUDA_MEMORY", (long)(size_t(8) << 30));
	return OK;
}

API CUresult cuDevicePrimaryCtxRetain(void** ctx, CUdevice d) {
	GUARD;
	if (d < 0 || d >= cfg.devices) return ERR_INVALID_DEVICE;
	if (ctx_refs++ == 0) {
		cfg.memory = (size_t)env_long("CHURON_FAKECUDA_MEMORY", (long)(size_t(8) << 30));
		cfg.fault_after = env_long("CHURON_FAKECUDA_FAULT_AFTER", 0);
		const char* j = getenv("CHURON_FAKECUDA_JIT_ERROR");
		cfg.jit_error = j ? j : "";
		const char* o = getenv("CHURON_FAKECUDA_ORDER");
		cfg.reverse = o && std::string(o) == "reverse";
		cfg.immediate = env_long("CHURON_FAKECUDA_SYNC", 0) != 0;
		sticky = OK;
		launches = 0;
	}
	*ctx = (void*)(uintptr_t)(0x1000 + d);
	return OK;
}

static void reset_context() {
	queue.clear();
	for (auto& a : allocs) munmap((void*)a.first, a.second + 4096);
	allocs.clear();
	used = 0;
	sticky = OK;
}

API CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d) {
	GUARD;
	if (d < 0 || d >= cfg.devices || ctx_refs == 0) return ERR_INVALID_CONTEXT;
	if (--ctx_refs == 0) reset_context();
	return OK;
}

API CUresult cuDevicePrimaryCtxReset_v2(CUdevice d) {
	GUARD;
	if (d < 0 || d >= cfg.devices) return ERR_INVALID_DEVICE;
	reset_context();
	return OK;
}

API CUresult cuCtxSetCurrent(void* ctx) {
	GUARD;
	return ctx ? OK : ERR_INVALID_CONTEXT;
}

API CUresult cuCtxSynchronize() {
	GUARD_CTX;
	return flush();
}

API CUresult cuMemGetInfo_v2(size_t* free_, size_t* total) {
	GUARD_CTX;
	*free_ = cfg.memory - used;
	*total = cfg.memory;
	return OK;
}

API CUresult cuMemAlloc_v2(CUdeviceptr* p, size_t n) {
	GUARD_CTX;
	if (n == 0) return ERR_INVALID_VALUE;
	size_t page = 4096, len = (n + page - 1) / page * page;
	if (used + len > cfg.memory) return ERR_OUT_OF_MEMORY;
	char* m = (char*)mmap(nullptr, len + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED) return ERR_OUT_OF_MEMORY;
	mprotect(m + len, page, PROT_NONE);
	// The allocation ends where the guard page begins.
	char* start = m + (len - n) / 256 * 256;
	memset(m, 0xff, len);
	allocs[(CUdeviceptr)m] = len;
	used += len;
	*p = (CUdeviceptr)start;
	return OK;
}

API CUresult cuMemFree_v2(CUdeviceptr p) {
	GUARD;
	if (ctx_refs == 0) return ERR_INVALID_CONTEXT;
	auto it = allocs.upper_bound(p);
	if (it == allocs.begin()) return ERR_INVALID_VALUE;
	--it;
	if (p < it->first || p >= it->first + it->second) return ERR_INVALID_VALUE;
	CUresult r = flush();  // work queued before the free still sees the memory
	munmap((void*)it->first, it->second + 4096);
	used -= it->second;
	allocs.erase(it);
	return r;
}

API CUresult cuMemAllocHost_v2(void** p, size_t n) {
	GUARD_CTX;
	*p = aligned_alloc(4096, (n + 4095) / 4096 * 4096);
	return *p ? OK : ERR_OUT_OF_MEMORY;
}

API CUresult cuMemFreeHost(void* p) {
	GUARD;
	free(p);
	return OK;
}

API CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void* src, size_t n) {
	GUARD_CTX;
	if (!device_range(dst, n)) return ERR_INVALID_VALUE;
	CUresult r = flush();
	if (r == OK) memcpy((void*)dst, src, n);
	return r;
}

API CUresult cuMemcpyDtoH_v2(void* dst, CUdeviceptr src, size_t n) {
	GUARD_CTX;
	if (!device_range(src, n)) return ERR_INVALID_VALUE;
	CUresult r = flush();
	if (r == OK) memcpy(dst, (const void*)src, n);
	return r;
}

API CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void* src, size_t n, void* stream) {
	GUARD_CTX;
	if (!device_range(dst, n)) return ERR_INVALID_VALUE;
	enqueue([=] { memcpy((void*)dst, src, n); });
	return OK;
}

API CUresult cuMemcpyDtoHAsync_v2(void* dst, CUdeviceptr src, size_t n, void* stream) {
	GUARD_CTX;
	if (!device_range(src, n)) return ERR_INVALID_VALUE;
	enqueue([=] { memcpy(dst, (const void*)src, n); });
	return OK;
}

API CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t n, void* stream) {
	GUARD_CTX;
	if (!device_range(dst, n) || !device_range(src, n)) return ERR_INVALID_VALUE;
	enqueue([=] { memmove((void*)dst, (const void*)src, n); });
	return OK;
}

API CUresult cuMemsetD32Async(CUdeviceptr dst, unsigned v, size_t n, void* stream) {
	GUARD_CTX;
	if (!device_range(dst, 4 * n)) return ERR_INVALID_VALUE;
	enqueue([=] {
		for (size_t i = 0; i < n; i++) ((unsigned*)dst)[i] = v;
	});
	return OK;
}

API CUresult cuModuleLoadDataEx(void** mod, const void* image, unsigned nopt, int* opts, void** vals) {
	GUARD_CTX;
	const char* ptx = (const char*)image;
	std::string log;
	CUresult r = OK;
	const char* ver = strstr(ptx, "\n.version ");
	const char* tgt = strstr(ptx, "\n.target sm_");
	if (!ver || !tgt) {
		r = ERR_INVALID_IMAGE;
	} else if (!cfg.jit_error.empty()) {
		r = ERR_INVALID_PTX;
		log = cfg.jit_error;
	} else {
		int maj = 0, min = 0, sm = 0;
		sscanf(ver, "\n.version %d.%d", &maj, &min);
		sscanf(tgt, "\n.target sm_%d", &sm);
		if (maj * 10 + min > max_ptx_isa(cfg.driver)) {
			r = ERR_UNSUPPORTED_PTX_VERSION;
		} else if (sm > cfg.cc) {
			r = ERR_INVALID_PTX;
			log = "ptxas fatal   : SM version specified by .target is higher than default SM version assumed";
		}
	}
	for (unsigned i = 0; i < nopt; i++) {
		if (opts[i] == 5) {  // CU_JIT_ERROR_LOG_BUFFER
			size_t cap = 0;
			for (unsigned j = 0; j < nopt; j++)
				if (opts[j] == 6) cap = (size_t)(uintptr_t)vals[j];
			if (cap > 0) snprintf((char*)vals[i], cap, "%s", log.c_str());
		}
	}
	if (r != OK) return r;
	Module* m = new Module;
	for (const char* p = ptx; (p = strstr(p, ".entry ")) != nullptr;) {
		p += 7;
		const char* e = p;
		while (*e && *e != '(' && *e != ' ' && *e != '\n') e++;
		m->entries.insert(std::string(p, e));
	}
	*mod = m;
	return OK;
}

API CUresult cuModuleGetFunction(void** f, void* mod, const char* name) {
	GUARD_CTX;
	Module* m = (Module*)mod;
	if (!m) return ERR_INVALID_HANDLE;
	auto it = emu::kernels().find(name);
	if (!m->entries.count(name) || it == emu::kernels().end()) return ERR_NOT_FOUND;
	*f = &it->second;
	return OK;
}

API CUresult cuModuleUnload(void* mod) {
	GUARD;
	flush();
	delete (Module*)mod;
	return OK;
}

API CUresult cuLaunchKernel(void* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                            unsigned shmem, void* stream, void** params, void** extra) {
	GUARD_CTX;
	const emu::Kernel* k = (const emu::Kernel*)f;
	if (!k) return ERR_INVALID_HANDLE;
	if (gx == 0 || gy == 0 || gz == 0 || bx == 0 || by == 0 || bz == 0 || gy > 65535 || gz > 65535 || bx > 1024 ||
	    by > 1024 || bz > 64 || (size_t)bx * by * bz > 1024)
		return ERR_INVALID_VALUE;
	if (shmem != 0 || extra != nullptr) return ERR_INVALID_VALUE;
	if (!k->sizes.empty() && !params) return ERR_INVALID_VALUE;
	std::vector<std::vector<unsigned char>> v(k->sizes.size());
	for (size_t i = 0; i < v.size(); i++) {
		v[i].resize(k->sizes[i]);
		memcpy(v[i].data(), params[i], k->sizes[i]);
	}
	emu::uint3 g{gx, gy, gz}, b{bx, by, bz};
	enqueue([k, v, g, b] { run_launch(k, v, g, b); });
	return OK;
}

API CUresult cuStreamCreate(void** s, unsigned flags) {
	GUARD_CTX;
	*s = new int(0);
	return OK;
}

API CUresult cuStreamDestroy_v2(void* s) {
	GUARD;
	flush();
	delete (int*)s;
	return OK;
}

API CUresult cuStreamSynchronize(void* s) {
	GUARD_CTX;
	return flush();
}

API CUresult cuStreamWaitEvent(void* s, void* e, unsigned flags) {
	GUARD_CTX;
	return OK;  // one queue: everything waits for everything before it
}

API CUresult cuEventCreate(void** e, unsigned flags) {
	GUARD_CTX;
	*e = new Event;
	return OK;
}

API CUresult cuEventDestroy_v2(void* e) {
	GUARD;
	flush();
	delete (Event*)e;
	return OK;
}

API CUresult cuEventRecord(void* e, void* stream) {
	GUARD_CTX;
	Event* ev = (Event*)e;
	ev->recorded = false;
	enqueue([ev] {
		ev->recorded = true;
		ev->ms = now_ms();
	});
	return OK;
}

API CUresult cuEventSynchronize(void* e) {
	GUARD_CTX;
	return flush();
}

API CUresult cuEventElapsedTime(float* ms, void* a, void* b) {
	GUARD_CTX;
	Event *ea = (Event*)a, *eb = (Event*)b;
	if (!ea->recorded || !eb->recorded) return ERR_INVALID_HANDLE;
	*ms = (float)(eb->ms - ea->ms);
	return OK;
}

API CUresult cuGetErrorName(CUresult r, const char** s) {
	for (auto& e : err_names)
		if (e.code == r) {
			*s = e.name;
			return OK;
		}
	*s = nullptr;
	return ERR_INVALID_VALUE;
}

API CUresult cuGetErrorString(CUresult r, const char** s) {
	for (auto& e : err_names)
		if (e.code == r) {
			*s = e.text;
			return OK;
		}
	*s = nullptr;
	return ERR_INVALID_VALUE;
}
