#!/usr/bin/env bash
# The GPU check, in one command, on a Linux machine with an NVIDIA GPU or
# a Mac with Apple silicon (Metal), and the binaries build.sh prepared for
# it (GPUCHECK_TARGET=darwin/arm64 for a Mac; no Go toolchain needed). Run
# from the repository root: bash tools/gpucheck/run.sh [OUTPUT_DIR]
# It writes every step's log into OUTPUT_DIR ($OUT, else ./gpucheck-out)
# as it goes, and a summary last; it takes 3–6 minutes.
#
# GPUCHECK_SHAPES replaces the benchmark models (SHAPE:TYPE[:layers=N]
# ...). GPUCHECK_EMULATED=1 rehearses the script on a machine without a
# GPU: with CHURON_CUDA_LIBRARY pointing at the emulated driver the tests
# build (emu/), everything runs as here, only slowly.
set -uo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)
b="$root/tools/gpucheck/bundle"
out="${1:-${OUT:-$root/gpucheck-out}}"
mkdir -p "$out"
start=$(date +%s)
step() { echo; echo "==> $* ($(( $(date +%s) - start ))s)"; }
status=0
record() { # name rc
  if [ "$2" -eq 0 ]; then echo "$1: ok" >> "$out/summary.txt"; else echo "$1: FAILED ($2)" >> "$out/summary.txt"; status=1; fi
}
: > "$out/summary.txt"
[ -x "$b/gpucheck" ] || { echo "run.sh: no $b/gpucheck: run tools/gpucheck/build.sh first"; exit 2; }
mac=0
[ "$(uname -s)" = Darwin ] && mac=1
backend=cuda
[ "$mac" = 1 ] && backend=metal
[ -x "$b/$backend.test" ] || { echo "run.sh: the bundle has no $backend.test (built for $(cat "$b/target" 2>/dev/null || echo linux/amd64)): run GPUCHECK_TARGET=... tools/gpucheck/build.sh for this machine"; exit 2; }
if [ "$mac" = 1 ]; then
  ncpu=$(sysctl -n hw.perflevel0.physicalcpu 2>/dev/null || sysctl -n hw.ncpu)
else
  ncpu=$(nproc)
fi
threads=$(( ncpu < 16 ? ncpu : 16 ))
# timeout is GNU's; macOS has none: perl's alarm does the same.
if ! command -v timeout > /dev/null; then
  timeout() { local s=$1; shift; perl -e 'alarm shift; exec @ARGV or die "exec: $!"' "$s" "$@"; }
fi

step "environment"
if [ "$mac" = 1 ]; then
  { echo "bundle built from: $(cat "$b/commit" 2>/dev/null)"; uname -a; sw_vers
    sysctl -n machdep.cpu.brand_string; echo "cores: $(sysctl -n hw.ncpu) ($ncpu performance)"
    echo "memory: $(( $(sysctl -n hw.memsize) >> 30 )) GiB"
    system_profiler SPDisplaysDataType 2>/dev/null | grep -E 'Chipset Model|Total Number of Cores|Metal' || echo "no system_profiler"
  } | tee "$out/env.txt"
else
  { echo "bundle built from: $(cat "$b/commit" 2>/dev/null)"; uname -a; nproc; free -g | head -2
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv 2>&1 || echo "no nvidia-smi"
  } | tee "$out/env.txt"
fi

step "benchmark models (written in the background meanwhile)"
models="$out/models"
shapes=${GPUCHECK_SHAPES:-"qwen2.5-0.5b:Q4_0 qwen2.5-0.5b:Q4_K_M tinyllama-1.1b:Q4_0 llama3-8b:Q4_0:layers=8 llama3-8b:Q4_K_M:layers=8"}
# shellcheck disable=SC2086 # the shapes are words
( "$b/gpucheck" synth -o "$models" $shapes > "$out/synth.log" 2>&1; echo $? > "$out/synth.rc" ) &
synth_pid=$!

step "the driver, the GPU and the kernels' compile"
timeout 120 "$b/gpucheck" smoke 2>&1 | tee "$out/smoke.log"
smoke_rc=${PIPESTATUS[0]}
record smoke "$smoke_rc"
if [ "$smoke_rc" -ne 0 ]; then
  # Every later step needs the device smoke could not open: running them
  # would spend the machine's time on failures that only repeat its reason.
  kill "$synth_pid" 2>/dev/null
  echo
  echo "run.sh: the GPU could not be used (the reason is above, and in $out/smoke.log); the other checks need it, so they did not run."
  cat "$out/summary.txt"
  exit 1
fi

step "every kernel against its CPU twin"
real=1
[ "${GPUCHECK_EMULATED:-}" = 1 ] && real=0
if [ "$mac" = 1 ]; then
  # On a Mac the tests open Metal itself (metal_darwin_test.go).
  ( cd engine/backend/metal && timeout 240 "$b/metal.test" -test.v -test.count=1 -test.run 'TestKernel' ) > "$out/kernels.log" 2>&1
else
  ( cd engine/backend/cuda && CHURON_CUDA_REAL=$real timeout 240 "$b/cuda.test" -test.v -test.count=1 \
      -test.run 'TestKernel|TestPTXMatchesSources|TestProbeNoLibrary|TestProbeNotCUDA' ) > "$out/kernels.log" 2>&1
fi
rc=$?
grep -E '^ *(--- |=== RUN|PASS|FAIL|ok)' "$out/kernels.log" | grep -v '=== RUN' | tail -30
record kernels "$rc"

step "end to end: logits against the CPU at every offload level, two sequences, snapshots restored on the CPU"
timeout 240 "$b/gpucheck" e2e -t "$threads" "$b/testdata/models/stories260K.gguf" "$b"/testdata/quantzoo/*.gguf 2>&1 | tee "$out/e2e.log"
record e2e "${PIPESTATUS[0]}"

step "speed: pp512 and tg128 (waiting for the models)"
wait "$synth_pid"
cat "$out/synth.log"
if [ "$(cat "$out/synth.rc")" = 0 ]; then
  timeout 200 "$b/gpucheck" perf -t "$threads" -json "$out/perf.json" "$models"/*.gguf 2>&1 | tee "$out/perf.log"
  record perf "${PIPESTATUS[0]}"
else
  record synth 1
fi
rm -rf "$models" # gigabytes: not worth bringing back

if [ "$mac" = 1 ]; then
  # Metal's API validation and shader validation layers (out-of-bounds
  # accesses, bad bindings), set by environment as Xcode's scheme
  # options set them. [Not yet run on a Mac: if neither changes anything,
  # say so in packaging/macos/README.md.]
  step "the matrix and attention kernels under Metal's validation layers"
  ( cd engine/backend/metal && MTL_DEBUG_LAYER=1 MTL_SHADER_VALIDATION=1 timeout 180 "$b/metal.test" -test.v \
      -test.run 'TestKernels/(MatMul|Attend|Quantize)$' ) > "$out/validation.log" 2>&1
  rc=$?
  tail -5 "$out/validation.log"
  record validation "$rc"
elif [ "$real" = 1 ] && command -v compute-sanitizer > /dev/null; then
  step "compute-sanitizer memcheck on the matrix and attention kernels"
  ( cd engine/backend/cuda && CHURON_CUDA_REAL=1 timeout 90 compute-sanitizer --tool memcheck \
      "$b/cuda.test" -test.run 'TestKernels/(MatMul|Attend|Quantize)$' ) > "$out/sanitizer.log" 2>&1
  tail -5 "$out/sanitizer.log"
  if grep -q 'ERROR SUMMARY: 0 errors' "$out/sanitizer.log"; then
    record sanitizer 0
  elif grep -q 'ERROR SUMMARY' "$out/sanitizer.log"; then
    record sanitizer 1
  else
    echo "sanitizer: could not run (see sanitizer.log)" >> "$out/summary.txt"
  fi
fi

step "summary"
cat "$out/summary.txt"
echo "logs in $out; $(( $(date +%s) - start ))s"
exit $status
