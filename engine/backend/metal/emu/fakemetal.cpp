// fakemetal.cpp: an emulated Metal runner for tests on machines without
// a Mac. It runs Churon's own kernels (kernels.metal, compiled into this
// library as host C++ against msl.h) on the CPU, behind the same few
// operations the backend's darwin runner performs on Metal: shared
// buffers, dispatches of named pipelines into a command buffer, commit
// and wait. The Go side (emu_linux_test.go) loads it with purego.
//
// It is test support, built by the tests with the host's C++ compiler;
// nothing ships it. What it checks and what it cannot:
//
//   - Command buffers: dispatches run in order, but only when the host
//     waits (fm_wait), as a committed command buffer runs after the host
//     encoded it: a backend that reads or writes a shared buffer before
//     waiting gets wrong results. The parameter bytes are copied when the
//     dispatch is encoded, as setBytes copies them.
//   - Memory: buffers are fresh pages filled with 0xff (NaN as float and
//     as half), ending right before an inaccessible guard page, so a
//     kernel that reads past its buffer faults the test. Reads before a
//     buffer are not caught.
//   - Dispatches: the threadgroup size (at most 1024 threads, 1-D), the
//     alignment of every load and store of a block's contents (ALIGNED),
//     and barriers a threadgroup or SIMD group can never complete. Threads
//     run one at a time in order (or reversed: CHURON_FAKEMETAL_ORDER=
//     reverse), so a missing barrier shows as a difference between the two
//     orders, not as a race.
//   - Faults: CHURON_FAKEMETAL_FAULT_AFTER=N fails the command buffer that
//     holds the Nth dispatch, with the error Metal reports for a GPU page
//     fault; what the buffer held after it does not run.
//
// Not emulated: timing, the memory model between threadgroups, Metal's
// own rounding of exp, tanh and sqrt (the host's run here), whatever
// contraction into FMA Metal's compiler does, threadgroup memory limits,
// and everything about the Metal API itself (objects, retain counts,
// autorelease pools): those are the darwin runner's, checked on a Mac.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "msl.h"

#if !defined(__x86_64__)
#include <ucontext.h>
#endif

#define EXPORT extern "C" __attribute__((visibility("default")))

namespace emu {

enum State { READY, WAIT_TG, WAIT_SG, DONE };

struct Thread {
	uint3 pos;
	uint lane = 0, sg = 0;
	State state = READY;
	void* sp = nullptr;
	uint64_t slot = 0;
};

struct Run {
	Invoker inv = nullptr;
	void** bufs = nullptr;
	uint3 tg{}, size{};
	std::vector<Thread> threads;
	std::vector<int> sg_live, sg_arrived;
	int live = 0, tg_arrived = 0;
	Thread* current = nullptr;
	void* sched_sp = nullptr;
	std::string error;
};

static Run* run = nullptr;
static bool reverse_order = false;

const size_t stack_size = 64 << 10;
static std::vector<char*> stacks;

extern "C" void fm_swap(void** save, void* to);

#if defined(__x86_64__)
asm(R"(
	.text
	.globl fm_swap
	.hidden fm_swap
	.type fm_swap, @function
fm_swap:
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
	.size fm_swap, .-fm_swap
)");
#endif

static void fiber_main();

#if defined(__x86_64__)
static void* fiber_stack(char* stack) {
	uintptr_t top = ((uintptr_t)(stack + stack_size)) & ~(uintptr_t)15;
	void** sp = (void**)top;
	*--sp = nullptr;
	*--sp = (void*)&fiber_main;
	for (int i = 0; i < 6; i++) *--sp = nullptr;
	return sp;
}
static void to_fiber(Thread& t) { fm_swap(&run->sched_sp, t.sp); }
static void to_sched(Thread& t) { fm_swap(&t.sp, run->sched_sp); }
#else
static std::vector<ucontext_t> uctx;
static ucontext_t sched_uc;
static void to_fiber(Thread& t) { swapcontext(&sched_uc, &uctx[&t - &run->threads[0]]); }
static void to_sched(Thread& t) { swapcontext(&uctx[&t - &run->threads[0]], &sched_uc); }
#endif

const uint3& tg_pos() { return run->tg; }
const uint3& tg_size() { return run->size; }
const uint3& t_pos() { return run->current->pos; }
uint sg_lane() { return run->current->lane; }
uint sg_index() { return run->current->sg; }

void misaligned(const void* p, int n) {
	if (run->error.empty()) {
		char buf[96];
		snprintf(buf, sizeof buf, "a %d-byte access at %p, which is not %d-byte aligned", n, p, n);
		run->error = buf;
	}
}

static void release_tg() {
	if (run->tg_arrived == 0 || run->tg_arrived < run->live) return;
	run->tg_arrived = 0;
	for (auto& t : run->threads)
		if (t.state == WAIT_TG) t.state = READY;
}

static void release_sg(int g) {
	if (run->sg_arrived[g] == 0 || run->sg_arrived[g] < run->sg_live[g]) return;
	run->sg_arrived[g] = 0;
	for (auto& t : run->threads)
		if ((int)t.sg == g && t.state == WAIT_SG) t.state = READY;
}

void barrier() {
	Thread& t = *run->current;
	run->tg_arrived++;
	t.state = WAIT_TG;
	release_tg();
	if (t.state != READY) to_sched(t);
}

static void sync_sg() {
	Thread& t = *run->current;
	run->sg_arrived[t.sg]++;
	t.state = WAIT_SG;
	release_sg(t.sg);
	if (t.state != READY) to_sched(t);
}

uint64_t exchange(uint64_t v, int src) {
	Thread& t = *run->current;
	t.slot = v;
	sync_sg();
	size_t si = (size_t)t.sg * 32 + (size_t)src;
	uint64_t r = v;
	if (src < 0 || src > 31 || si >= run->threads.size() || run->threads[si].state == DONE) {
		if (run->error.empty()) run->error = "a SIMD-group shuffle read a lane that does not exist or has exited";
	} else {
		r = run->threads[si].slot;
	}
	sync_sg();
	return r;
}

static void fiber_main() {
	Thread& t = *run->current;
	run->inv(run->bufs);
	t.state = DONE;
	run->live--;
	run->sg_live[t.sg]--;
	release_tg();
	release_sg(t.sg);
	to_sched(t);
	abort();
}

#if !defined(__x86_64__)
static void fiber_entry() { fiber_main(); }
#endif

static void run_threadgroup() {
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
	int ng = (int)((n + 31) / 32);
	run->sg_live.assign(ng, 0);
	run->sg_arrived.assign(ng, 0);
	for (size_t i = 0; i < n; i++) {
		Thread& t = run->threads[i];
		t.state = READY;
		t.pos = uint3{(uint)i, 0, 0};
		t.lane = (uint)(i % 32);
		t.sg = (uint)(i / 32);
		run->sg_live[t.sg]++;
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
	run->tg_arrived = 0;
	while (run->live > 0 && run->error.empty()) {
		bool progress = false;
		for (size_t k = 0; k < n && run->error.empty(); k++) {
			size_t i = reverse_order ? n - 1 - k : k;
			Thread& t = run->threads[i];
			if (t.state != READY) continue;
			run->current = &t;
			to_fiber(t);
			progress = true;
		}
		if (!progress && run->error.empty()) {
			int wt = 0, ws = 0;
			for (auto& t : run->threads) wt += t.state == WAIT_TG, ws += t.state == WAIT_SG;
			char buf[160];
			snprintf(buf, sizeof buf,
			         "barrier deadlock: %d threads wait at threadgroup_barrier and %d at a SIMD-group shuffle, %d have "
			         "exited",
			         wt, ws, (int)n - run->live);
			run->error = buf;
		}
	}
}

struct Kernel {
	std::string name;
	Invoker inv;
	int nbufs;
};

static std::vector<Kernel>& kernels() {
	static std::vector<Kernel> k;
	return k;
}

void register_kernel(const char* name, Invoker inv, int nbufs) { kernels().push_back(Kernel{name, inv, nbufs}); }

}  // namespace emu

namespace {

std::mutex mu;

struct Dispatch {
	int k;
	uint3 grid, tg;
	std::vector<u8> params;
	std::vector<void*> bufs;
	bool fault;
};

std::vector<Dispatch> encoded;
long dispatches = 0, fault_after = -1;
std::map<uintptr_t, std::pair<void*, size_t>> buffers;  // contents → (mapping, length)
size_t live_bytes = 0;

long env_long(const char* name, long def) {
	const char* v = getenv(name);
	if (!v || !*v) return def;
	return strtol(v, nullptr, 10);
}

std::string run_dispatch(Dispatch& d) {
	emu::Kernel& k = emu::kernels()[d.k];
	if (d.tg.y != 1 || d.tg.z != 1 || d.tg.x == 0 || d.tg.x > 1024)
		return "threadgroup of " + std::to_string(d.tg.x) + "×" + std::to_string(d.tg.y) + "×" + std::to_string(d.tg.z) +
		       " threads for " + k.name + " (the kernels use 1-D threadgroups of up to 1024)";
	if ((int)d.bufs.size() != k.nbufs)
		return k.name + " takes " + std::to_string(k.nbufs) + " bindings, got " + std::to_string(d.bufs.size());
	std::vector<void*> bufs = d.bufs;
	bufs[0] = d.params.data();
	emu::Run r;
	r.inv = k.inv;
	r.bufs = bufs.data();
	r.size = uint3{d.tg.x, 1, 1};
	r.threads.resize(d.tg.x);
	emu::run = &r;
	for (uint z = 0; z < d.grid.z && r.error.empty(); z++)
		for (uint y = 0; y < d.grid.y && r.error.empty(); y++)
			for (uint x0 = 0; x0 < d.grid.x && r.error.empty(); x0++) {
				uint x = emu::reverse_order ? d.grid.x - 1 - x0 : x0;
				r.tg = uint3{x, y, z};
				emu::run_threadgroup();
			}
	emu::run = nullptr;
	if (!r.error.empty()) return k.name + ": " + r.error;
	return "";
}

}  // namespace

// fm_init reads the configuration (CHURON_FAKEMETAL_*) and says how many
// kernels the library has.
EXPORT int fm_init() {
	std::lock_guard<std::mutex> l(mu);
	fault_after = env_long("CHURON_FAKEMETAL_FAULT_AFTER", 0);
	const char* o = getenv("CHURON_FAKEMETAL_ORDER");
	emu::reverse_order = o && std::string(o) == "reverse";
	dispatches = 0;
	return (int)emu::kernels().size();
}

// fm_kernel is the index of the kernel called name, or -1.
EXPORT int fm_kernel(const char* name) {
	auto& ks = emu::kernels();
	for (size_t i = 0; i < ks.size(); i++)
		if (ks[i].name == name) return (int)i;
	return -1;
}

// fm_alloc maps n bytes (at least 1) filled with 0xff that end where an
// inaccessible page begins; the contents are 16-byte aligned.
EXPORT void* fm_alloc(size_t n) {
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t body = (n + 15) & ~(size_t)15;
	if (body == 0) body = 16;
	size_t pages = (body + page - 1) / page;
	size_t len = (pages + 1) * page;
	void* m = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED) return nullptr;
	mprotect((char*)m + pages * page, page, PROT_NONE);
	char* p = (char*)m + pages * page - body;
	memset((char*)m, 0xff, pages * page);
	std::lock_guard<std::mutex> l(mu);
	buffers[(uintptr_t)p] = {m, len};
	live_bytes += body;
	return p;
}

EXPORT void fm_free(void* p) {
	std::lock_guard<std::mutex> l(mu);
	auto it = buffers.find((uintptr_t)p);
	if (it == buffers.end()) return;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	live_bytes -= it->second.second - page - ((uintptr_t)p - (uintptr_t)it->second.first);
	munmap(it->second.first, it->second.second);
	buffers.erase(it);
}

// fm_live is the bytes of the buffers not yet freed.
EXPORT size_t fm_live() {
	std::lock_guard<std::mutex> l(mu);
	return live_bytes;
}

// fm_dispatch encodes kernel k over grid threadgroups of tg threads with
// the bindings bufs (bufs[0] is replaced by a copy of the params bytes).
EXPORT void fm_dispatch(int k, u32 gx, u32 gy, u32 gz, u32 tx, u32 ty, u32 tz, const void* params, int plen,
                        void* const* bufs, int nbufs) {
	std::lock_guard<std::mutex> l(mu);
	Dispatch d;
	d.k = k;
	d.grid = uint3{gx, gy, gz};
	d.tg = uint3{tx, ty, tz};
	d.params.assign((const u8*)params, (const u8*)params + plen);
	d.params.resize(((size_t)plen + 15) & ~(size_t)15);
	d.bufs.assign(bufs, bufs + nbufs);
	dispatches++;
	d.fault = fault_after > 0 && dispatches == fault_after;
	encoded.push_back(std::move(d));
}

// fm_wait runs what was encoded. It returns 0, or 1 with the first
// failure's message in err (what followed it did not run).
EXPORT int fm_wait(char* err, int errlen) {
	std::lock_guard<std::mutex> l(mu);
	std::vector<Dispatch> q;
	q.swap(encoded);
	std::string e;
	for (auto& d : q) {
		if (d.fault) {
			e = "Caused GPU Address Fault Error (0000000b:kIOGPUCommandBufferCallbackErrorPageFault)";
			break;
		}
		if (d.k < 0 || d.k >= (int)emu::kernels().size()) {
			e = "no such pipeline";
			break;
		}
		e = run_dispatch(d);
		if (!e.empty()) break;
	}
	if (e.empty()) return 0;
	snprintf(err, (size_t)errlen, "%s", e.c_str());
	return 1;
}

// The kernels, compiled for the host (last: msl.h's macros stay here).
#include "kernels.metal"
