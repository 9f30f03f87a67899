#!/usr/bin/env bash
# Runs llama.cpp (bench.mjs, prebuilt CPU binaries from node-llama-cpp) and
# `churon bench` on the same GGUF files, interleaved (A B A B …), and prints
# one table (or JSON) with the ratios churon ÷ llama.cpp. See README.md.
#
#   tools/llamacpp-bench/bench.sh [options] MODEL.gguf...
#   tools/llamacpp-bench/bench.sh --standard          # issue 3's four files
#
# Options:
#   -p N, -n N, -r N    prompt tokens, generated tokens, repetitions (128, 64, 3)
#   -t LIST             threads, comma-separated (1,2)
#   -d, --depth LIST    tokens already in the KV cache before each timed test,
#                       comma-separated (0; llama-bench's -d): e.g. 0,2048
#   --rounds K          A B pairs per model, thread count and depth (2)
#   --churon PATH       churon binary (default: $CHURON, else built from this repo)
#   --fa auto|on|off    llama.cpp flash attention (auto, llama-bench's default)
#   --cpu-variant NAME  make llama.cpp use libggml-cpu-NAME.so (e.g. zen4:
#                       AVX-512 VNNI, no AMX, as on issue 3's EPYC) instead of the best one ggml picks
#   --standard          synthesize (once) and bench the 0.5B Q4_0/Q8_0/Q4_K_M and 1.1B Q4_0 files
#   --wait-idle S       before each run wait (at most S seconds) until other processes
#                       use under 10 % of the CPUs over 2 s
#   --out FILE          keep the raw JSON lines there (default under the cache dir)
#   --json              print the comparison as JSON instead of a table
#   --install           only install node-llama-cpp into the cache dir
# Environment: LLAMACPP_BENCH_DIR (cache; default ${XDG_CACHE_HOME:-~/.cache}/churon/llamacpp-bench).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
cache=${LLAMACPP_BENCH_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/churon/llamacpp-bench}
# Never download or build llama.cpp at install or run time.
export NODE_LLAMA_CPP_SKIP_DOWNLOAD=true NODE_LLAMA_CPP_POSTINSTALL=skip

die() { echo "bench.sh: $*" >&2; exit 1; }

install() {
    mkdir -p "$cache"
    if [[ -d $cache/node_modules/node-llama-cpp ]] &&
        cmp -s "$here/package.json" "$cache/package.json" &&
        cmp -s "$here/package-lock.json" "$cache/package-lock.json"; then
        return
    fi
    command -v npm >/dev/null || die "npm not found (node ≥ 20 and npm are needed)"
    cp "$here/package.json" "$here/package-lock.json" "$cache/"
    echo "bench.sh: installing node-llama-cpp into $cache" >&2
    # --ignore-scripts: no postinstall (it would try to fetch or build llama.cpp);
    # --omit=optional: only the linux-x64 CPU binaries, no CUDA/Vulkan packages.
    (cd "$cache" && npm install --ignore-scripts --omit=optional --omit-lockfile-registry-resolved \
        --no-audit --no-fund --loglevel=error) >&2
    # npm rewrites the lock when it fills in entries for other platforms;
    # keep the copy that compares equal to ours so the next run skips this.
    cp "$here/package-lock.json" "$cache/"
}

p=128 n=64 r=3 threads=1,2 depths=0 rounds=2 fa=auto variant="" standard=0 out="" asjson=0 only_install=0 wait_idle=0
churon=${CHURON:-}
models=()
while (($#)); do
    case $1 in
        -p) p=$2; shift 2 ;;
        -n) n=$2; shift 2 ;;
        -r) r=$2; shift 2 ;;
        -t) threads=$2; shift 2 ;;
        -d|--depth) depths=$2; shift 2 ;;
        --rounds) rounds=$2; shift 2 ;;
        --churon) churon=$2; shift 2 ;;
        --fa) fa=$2; shift 2 ;;
        --cpu-variant) variant=$2; shift 2 ;;
        --standard) standard=1; shift ;;
        --out) out=$2; shift 2 ;;
        --wait-idle) wait_idle=$2; shift 2 ;;
        --json) asjson=1; shift ;;
        --install) only_install=1; shift ;;
        -h|--help) sed -n '2,25p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) die "unknown option $1" ;;
        *) models+=("$1"); shift ;;
    esac
done

IFS=, read -r -a dlist <<<"$depths"
dset=""
[[ $depths == 0 ]] || dset=1
((${#dlist[@]})) || die "-d: empty depth list"
for d in "${dlist[@]}"; do [[ $d =~ ^(0|[1-9][0-9]*)$ ]] || die "-d: not a non-negative integer: '$d'"; done

install
((only_install)) && exit 0

moddir=$cache
if [[ -n $variant ]]; then
    bins=node_modules/@node-llama-cpp/linux-x64/bins/linux-x64
    [[ -f $cache/$bins/libggml-cpu-$variant.so ]] || die "no CPU variant $variant (have: $(cd "$cache/$bins" && ls libggml-cpu-*.so | sed 's/libggml-cpu-//; s/\.so//' | tr '\n' ' '))"
    moddir=$cache/variant-$variant
    if [[ ! -d $moddir/node_modules ]]; then
        # Hard links: a second install costs no space; ggml picks the best CPU
        # library it finds next to the addon, so leave only the one wanted.
        mkdir -p "$moddir"
        cp -al "$cache/node_modules" "$moddir/node_modules"
        find "$moddir/$bins" -name 'libggml-cpu-*.so' ! -name "libggml-cpu-$variant.so" -delete
    fi
fi

if [[ -z $churon ]]; then
    churon=$cache/churon
    echo "bench.sh: building churon from $repo" >&2
    (cd "$repo" && go build -o "$churon" .) || die "go build failed (pass --churon PATH)"
    churon_desc="built from $repo at $(git -C "$repo" describe --always --dirty 2>/dev/null || echo unknown)"
else
    [[ -x $churon ]] || die "churon binary not found: $churon"
    churon_desc="given, $("$churon" --version 2>/dev/null | head -1), sha256 $(sha256sum "$churon" | cut -c1-12)"
fi

if ((standard)); then
    mdir=$cache/models
    mkdir -p "$mdir"
    # The sizes of issue 3's reference files: --vocab 32000 --tied no for the 0.5B shape.
    for spec in "qwen2.5-0.5b Q4_0" "qwen2.5-0.5b Q8_0" "qwen2.5-0.5b Q4_K_M" "tinyllama-1.1b Q4_0"; do
        read -r shape type <<<"$spec"
        f=$mdir/$shape-$type-seed1.gguf
        extra=()
        [[ $shape == qwen2.5-0.5b ]] && extra=(--vocab 32000 --tied no)
        if [[ ! -s $f ]]; then
            echo "bench.sh: synthesizing $f" >&2
            "$churon" dev synth --shape "$shape" --type "$type" --seed 1 "${extra[@]}" -o "$f.tmp" >"$f.log" 2>&1 ||
                die "churon dev synth failed (see $f.log)"
            mv "$f.tmp" "$f"
        fi
        models+=("$f")
    done
fi
((${#models[@]})) || die "no model given (MODEL.gguf... or --standard)"
for m in "${models[@]}"; do [[ -s $m ]] || die "no such model: $m"; done

if [[ -z $out ]]; then
    mkdir -p "$cache/runs"
    out=$cache/runs/$(date -u +%Y%m%dT%H%M%SZ).jsonl
fi
: >"$out"
log=${out%.jsonl}.log
: >"$log"

{
    echo "# $(date -u +%FT%TZ) $(uname -n), $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
    echo "# churon $churon ($churon_desc); llama.cpp via node-llama-cpp $(node -p "require('$moddir/node_modules/node-llama-cpp/package.json').version")${variant:+, CPU variant forced to $variant}"
    echo "# load before: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "# -p $p -n $n -r $r -t $threads${dset:+ -d $depths}, $rounds round(s) of llama.cpp then churon per model, thread count${dset:+ and depth}; raw: $out"
} >&2

IFS=, read -r -a tlist <<<"$threads"
hz=$(getconf CLK_TCK)
ncpu=$(nproc)
# CPU time the whole machine spent busy, in ms, and that of this script's
# finished children: their difference over a run is what others used.
busy_ms() { local _c u ni sy id io irq sirq st _r; read -r _c u ni sy id io irq sirq st _r </proc/stat; echo $(((u + ni + sy + irq + sirq + st) * 1000 / hz)); }
# (`times` must run in this shell, not in a $(…) subshell, to see them.)
timesf=$(mktemp)
trap 'rm -f "$timesf" "$timesf.c"' EXIT
child_ms() { times >"$timesf"; tail -1 "$timesf" | awk '{ t = 0; for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); t += a[1] * 60000 + a[2] * 1000 } printf "%d\n", t }'; }
# Wait until the machine is idle (nothing of ours runs here), at most $wait_idle s.
wait_idle() {
    ((wait_idle > 0)) || return 0
    local deadline=$((SECONDS + wait_idle)) b0 b1
    while ((SECONDS < deadline)); do
        b0=$(busy_ms); sleep 2; b1=$(busy_ms)
        (((b1 - b0) * 100 < 10 * 2000 * ncpu)) && return 0
    done
    echo "bench.sh:   still busy after ${wait_idle}s; running anyway" >&2
}
# run ENGINE ROUND CMD...: run CMD, tag its JSON lines, and add how busy the
# rest of the machine was meanwhile (percent of all CPUs).
run() {
    local engine=$1 k=$2 res b0 c0 w0 b1 c1 w1 foreign
    shift 2
    wait_idle
    child_ms >"$timesf.c"; c0=$(<"$timesf.c")
    b0=$(busy_ms) w0=$(date +%s%3N)
    res=$("$@" 2>>"$log") || die "$engine run failed (see $log)"
    b1=$(busy_ms) w1=$(date +%s%3N)
    child_ms >"$timesf.c"; c1=$(<"$timesf.c")
    foreign=$(awk -v b=$((b1 - b0)) -v c=$((c1 - c0)) -v w=$((w1 - w0)) -v n="$ncpu" \
        'BEGIN { f = (b - c) / (w * n) * 100; if (f < 0) f = 0; printf "%.1f", f }')
    sed -e "/^{\"engine\":/!s/^{/{\"engine\":\"$engine\",/" \
        -e "s/^{/{\"round\":$k,\"foreign_cpu_pct\":$foreign,/" <<<"$res" >>"$out"
    echo "bench.sh:   others used $foreign % of the CPUs meanwhile" >&2
}
for m in "${models[@]}"; do
    for t in "${tlist[@]}"; do
        for d in "${dlist[@]}"; do
            # At depth 0 no flag at all: the very commands of a run without -d.
            dflag=() at=""
            ((d > 0)) && dflag=(--depth "$d") at=" d=$d"
            for ((k = 1; k <= rounds; k++)); do
                echo "bench.sh: $(basename "$m") t=$t$at round $k: llama.cpp" >&2
                run llama.cpp "$k" env LLAMACPP_BENCH_DIR="$moddir" node "$here/bench.mjs" -m "$m" -p "$p" -n "$n" -r "$r" -t "$t" "${dflag[@]}" --fa "$fa" --json
                echo "bench.sh: $(basename "$m") t=$t$at round $k: churon" >&2
                run churon "$k" "$churon" bench -m "$m" -p "$p" -n "$n" -r "$r" -t "$t" "${dflag[@]}" --no-mmap --json
            done
        done
    done
done
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2

if ((asjson)); then
    node "$here/compare.mjs" "$out" --json
else
    node "$here/compare.mjs" "$out"
fi
