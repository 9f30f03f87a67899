#!/usr/bin/env bash
# Runs the remote-engine tests against a real llama-server: llama.cpp's
# server, built once from the source node-llama-cpp ships
# (llama/gitRelease.bundle, the tree tools/llamacpp-bench/build.sh uses),
# serving stories260K on loopback with an API key. Outside CI: the build
# takes a while (see README.md); the tests skip, saying so, without it.
#
#   tools/llama-server/run.sh [go test flags...]
#
# Environment: CHURON_TESTDATA (stories260K.gguf under models/; default
# /work/shared/testdata), LLAMACPP_BUILD_DIR, LLAMACPP_BENCH_DIR, JOBS.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
cache=${XDG_CACHE_HOME:-$HOME/.cache}/churon
bench_dir=${LLAMACPP_BENCH_DIR:-$cache/llamacpp-bench}
root=${LLAMACPP_BUILD_DIR:-$cache/llamacpp-build}
bundle=$bench_dir/node_modules/node-llama-cpp/llama/gitRelease.bundle
jobs=${JOBS:-$(nproc)}
testdata=${CHURON_TESTDATA:-/work/shared/testdata}
model=$testdata/models/stories260K.gguf

die() { echo "run.sh: $*" >&2; exit 1; }
[[ -f $model ]] || die "no $model (set CHURON_TESTDATA)"
command -v cmake >/dev/null || die "cmake not found"

src=$root/src
if [[ ! -d $src/.git ]]; then
    [[ -f $bundle ]] || die "no $bundle (run tools/llamacpp-bench/bench.sh --install first)"
    mkdir -p "$root"
    git clone -q "$bundle" "$src.tmp"
    mv "$src.tmp" "$src"
fi
out=$root/server
bin=$out/build/bin/llama-server
if [[ ! -x $bin ]]; then
    echo "run.sh: building llama-server in $out (load $(cut -d' ' -f1-3 /proc/loadavg), $jobs jobs)" >&2
    mkdir -p "$out"
    t0=$SECONDS
    nice -n 5 cmake -S "$src" -B "$out/build" -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF \
        -DLLAMA_OPENSSL=OFF -DLLAMA_CURL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
        -DLLAMA_BUILD_SERVER=ON -DGGML_NATIVE=ON -DGGML_BACKEND_DL=OFF >"$out/cmake.log" 2>&1 ||
        die "cmake configure failed (see $out/cmake.log)"
    nice -n 5 cmake --build "$out/build" --target llama-server -j "$jobs" >"$out/build.log" 2>&1 ||
        die "build failed (see $out/build.log)"
    echo "run.sh: built in $((SECONDS - t0)) s" >&2
fi
echo "run.sh: llama-server from $(git -C "$src" rev-parse --short HEAD) ($("$bin" --version 2>&1 | grep -m1 -i version || true))" >&2

# A free port on loopback.
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
key=sk-llama-server-test-$RANDOM$RANDOM
log=$(mktemp)
"$bin" -m "$model" --host 127.0.0.1 --port "$port" --api-key "$key" -c 512 -np 2 -t 2 >"$log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -f "$log"' EXIT
for _ in $(seq 120); do
    curl -sf "http://127.0.0.1:$port/health" >/dev/null 2>&1 && break
    kill -0 $pid 2>/dev/null || { cat "$log" >&2; die "llama-server exited"; }
    sleep 0.5
done
curl -sf "http://127.0.0.1:$port/health" >/dev/null || { tail -20 "$log" >&2; die "llama-server did not come up"; }
echo "run.sh: llama-server serving stories260K at http://127.0.0.1:$port" >&2
cd "$repo"
CHURON_LLAMA_SERVER=http://127.0.0.1:$port CHURON_LLAMA_SERVER_KEY=$key CHURON_LLAMA_SERVER_MODEL=$model \
    go test -count=1 -run 'TestLlamaServer' -v "$@" ./app/remote/
