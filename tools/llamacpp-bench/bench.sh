#!/usr/bin/env bash
# Runs llama.cpp and `churon bench` on the same GGUF files, interleaved
# (A B A B …), and prints one table (or JSON) with the ratios churon ÷
# llama.cpp. llama.cpp is the reference chosen with --reference: the prebuilt
# CPU binaries node-llama-cpp ships (bench.mjs), or a llama-bench that
# build.sh compiled for this CPU (llamabench.mjs). See README.md.
#
#   tools/llamacpp-bench/bench.sh [options] MODEL.gguf...
#   tools/llamacpp-bench/bench.sh --standard          # issue 22's six files
#
# Options:
#   -p N, -n N, -r N    prompt tokens, generated tokens, repetitions (128, 64, 3)
#   -t LIST             threads, comma-separated (1,2)
#   -d, --depth LIST    tokens already in the KV cache before each timed test,
#                       comma-separated (0; llama-bench's -d): e.g. 0,4096
#   --batch LIST        decode only (-p 0): B sequences decoded together, for each
#                       B in LIST (e.g. 1,2,4,8), aggregate tokens/s; llama.cpp
#                       is llama-batched-bench of the --reference build (native
#                       or avx2), churon is `churon bench --batch B`
#   --rounds K          rounds per model, thread count and depth (2): each runs
#                       the reference(s), then churon
#   --reference R       prebuilt (default): node-llama-cpp's binaries, the CPU
#                       variant ggml picks; native or avx2: build.sh's builds;
#                       best: prebuilt and native both, the faster one per cell
#                       is the reference
#   --builds DIR        where build.sh put its builds
#                       (${XDG_CACHE_HOME:-~/.cache}/churon/llamacpp-build)
#   --churon PATH       churon binary (default: $CHURON, else built from this repo)
#   --churon-cpu LEVEL  run churon with CHURON_CPU=LEVEL (avx2, avx512, go); with
#                       --reference avx2 it defaults to avx2. The run fails if
#                       churon's backend does not report that level
#   --no-churon         run only the reference(s): llama.cpp's figures, no ratios
#   --fa auto|on|off    llama.cpp flash attention (auto, llama-bench's default)
#   --cpu-variant NAME  make the prebuilt llama.cpp use libggml-cpu-NAME.so
#                       (e.g. zen4, alderlake) instead of the one ggml picks
#   --synth SPEC        synthesize (once, into the cache) and bench
#                       SHAPE:TYPE[:LAYERS[:VOCAB[:TIED]]] (churon dev synth's
#                       --shape --type --layers --vocab --tied, seed 1; empty
#                       fields keep the shape's own), e.g. llama3-8b:Q4_K_M:8;
#                       repeatable
#   --standard          issue 22's six files: qwen2.5-0.5b (--vocab 32000
#                       --tied no) and tinyllama-1.1b, each Q4_0, Q8_0, Q4_K_M
#   --wait-idle S       before each run wait (at most S seconds) until other processes
#                       use under 10 % of the CPUs over 2 s
#   --out FILE          keep the raw JSON lines there (default under the cache dir)
#   --json              print the comparison as JSON instead of a table
#   --install           only install node-llama-cpp into the cache dir
# Environment: LLAMACPP_BENCH_DIR (cache; default ${XDG_CACHE_HOME:-~/.cache}/churon/llamacpp-bench).
set -euo pipefail
shopt -s extglob

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
cache=${LLAMACPP_BENCH_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/churon/llamacpp-bench}
# Never download or build llama.cpp at install or run time.
export NODE_LLAMA_CPP_SKIP_DOWNLOAD=true NODE_LLAMA_CPP_POSTINSTALL=skip

die() { echo "bench.sh: $*" >&2; exit 1; }
invocation="tools/llamacpp-bench/bench.sh$(printf ' %q' "$@")"

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

p=128 n=64 r=3 threads=1,2 depths=0 batches="" rounds=2 fa=auto variant="" out="" asjson=0 only_install=0 wait_idle=0
no_churon=0 reference=prebuilt builds=${XDG_CACHE_HOME:-$HOME/.cache}/churon/llamacpp-build churon_cpu="" churon_cpu_set=0
churon=${CHURON:-}
models=() synths=()
while (($#)); do
    case $1 in
        -p) p=$2; shift 2 ;;
        -n) n=$2; shift 2 ;;
        -r) r=$2; shift 2 ;;
        -t) threads=$2; shift 2 ;;
        -d|--depth) depths=$2; shift 2 ;;
        --batch) batches=$2; shift 2 ;;
        --rounds) rounds=$2; shift 2 ;;
        --churon) churon=$2; shift 2 ;;
        --fa) fa=$2; shift 2 ;;
        --cpu-variant) variant=$2; shift 2 ;;
        --reference) reference=$2; shift 2 ;;
        --builds) builds=$2; shift 2 ;;
        --churon-cpu) churon_cpu=$2; churon_cpu_set=1; shift 2 ;;
        --synth) synths+=("$2"); shift 2 ;;
        --no-churon) no_churon=1; shift ;;
        --standard)
            synths+=(qwen2.5-0.5b:Q4_0::32000:no qwen2.5-0.5b:Q8_0::32000:no qwen2.5-0.5b:Q4_K_M::32000:no
                tinyllama-1.1b:Q4_0 tinyllama-1.1b:Q8_0 tinyllama-1.1b:Q4_K_M)
            shift ;;
        --out) out=$2; shift 2 ;;
        --wait-idle) wait_idle=$2; shift 2 ;;
        --json) asjson=1; shift ;;
        --install) only_install=1; shift ;;
        -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) die "unknown option $1" ;;
        *) models+=("$1"); shift ;;
    esac
done

IFS=, read -r -a dlist <<<"$depths"
dset=""
[[ $depths == 0 ]] || dset=1
((${#dlist[@]})) || die "-d: empty depth list"
for d in "${dlist[@]}"; do [[ $d =~ ^(0|[1-9][0-9]*)$ ]] || die "-d: not a non-negative integer: '$d'"; done

blist=("")
if [[ -n $batches ]]; then
    IFS=, read -r -a blist <<<"$batches"
    for b in "${blist[@]}"; do [[ $b =~ ^[1-9][0-9]*$ ]] || die "--batch: not a positive integer: '$b'"; done
    [[ $reference == native || $reference == avx2 ]] || die "--batch needs --reference native or avx2 (llama-batched-bench from build.sh)"
    p=0
fi

# The references each round runs, in order.
case $reference in
    prebuilt) refs=(prebuilt) ;;
    native|avx2) refs=("$reference") ;;
    best) refs=(prebuilt native) ;;
    *) die "--reference: want prebuilt, native, avx2 or best, got '$reference'" ;;
esac
[[ $reference == avx2 ]] && ((!churon_cpu_set && !no_churon)) && churon_cpu=avx2
[[ -z $churon_cpu || $churon_cpu =~ ^[a-z0-9]+$ ]] || die "--churon-cpu: not a level: '$churon_cpu'"
[[ -z $variant || " ${refs[*]} " == *" prebuilt "* ]] || die "--cpu-variant applies to the prebuilt reference only"
for ref in "${refs[@]}"; do
    [[ $ref == prebuilt ]] && continue
    [[ -x $builds/$ref/bin/llama-bench && -s $builds/$ref/build-info.txt ]] ||
        die "no $ref build in $builds/$ref (run tools/llamacpp-bench/build.sh $ref)"
    [[ -z $batches || -x $builds/$ref/bin/llama-batched-bench ]] ||
        die "no llama-batched-bench in $builds/$ref/bin (run tools/llamacpp-bench/build.sh $ref: it adds it)"
done

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

for spec in "${synths[@]}"; do
    IFS=: read -r shape type layers vocab tied <<<"$spec"
    [[ -n $shape && -n $type && ${layers:-1} =~ ^[1-9][0-9]*$ && ${vocab:-1} =~ ^[1-9][0-9]*$ && ${tied:-no} =~ ^(yes|no)$ ]] ||
        die "--synth: want SHAPE:TYPE[:LAYERS[:VOCAB[:TIED]]], got '$spec'"
    mdir=$cache/models
    mkdir -p "$mdir"
    extra=() tag=$shape
    [[ -n $layers ]] && extra+=(--layers "$layers") tag+=-cut$layers
    [[ -n $vocab ]] && extra+=(--vocab "$vocab") tag+=-v$vocab
    [[ -n $tied ]] && extra+=(--tied "$tied") tag+=-tied$tied
    f=$mdir/$tag-$type-seed1.gguf
    # The names earlier versions of this script gave the standard files.
    [[ $spec == qwen2.5-0.5b:+([A-Z0-9_])::32000:no || $spec == tinyllama-1.1b:+([A-Z0-9_]) ]] && f=$mdir/$shape-$type-seed1.gguf
    if [[ ! -s $f ]]; then
        echo "bench.sh: synthesizing $f" >&2
        "$churon" dev synth --shape "$shape" --type "$type" --seed 1 "${extra[@]}" -o "$f.tmp" >"$f.log" 2>&1 ||
            die "churon dev synth failed (see $f.log)"
        mv "$f.tmp" "$f"
    fi
    models+=("$f")
done
((${#models[@]})) || die "no model given (MODEL.gguf... or --standard)"
for m in "${models[@]}"; do [[ -s $m ]] || die "no such model: $m"; done

if [[ -z $out ]]; then
    mkdir -p "$cache/runs"
    out=$cache/runs/$(date -u +%Y%m%dT%H%M%SZ).jsonl
fi
: >"$out"
log=${out%.jsonl}.log
: >"$log"

refdesc() {
    case $1 in
        prebuilt) echo "prebuilt: node-llama-cpp $(node -p "require('$moddir/node_modules/node-llama-cpp/package.json').version")'s binaries${variant:+, CPU variant forced to $variant}" ;;
        *) local info=$builds/$1/build-info.txt arch
            arch=$(sed -n 's/^compiler resolves them to //p' "$info")
            [[ -n $arch ]] || arch=$(sed -n 's/^ggml-cpu arch flags //p' "$info")
            echo "$1: llama-bench built by build.sh in $builds/$1 ($(sed -n 's/^source //p' "$info" | cut -d, -f1), $(grep '^compiler ' "$info" | grep -v '^compiler resolves' | head -1 | sed 's/^compiler //; s/^cc //'); ${arch% })" ;;
    esac
}
refline=$(for ref in "${refs[@]}"; do refdesc "$ref"; done | paste -sd ';' | sed 's/;/; /g')
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
{
    echo "# $invocation"
    echo "# $(date -u +%FT%TZ) $(uname -n), $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
    ((no_churon)) || echo "# churon $churon ($churon_desc)${churon_cpu:+, CHURON_CPU=$churon_cpu}"
    echo "# reference $reference: $refline"
    echo "# load before: $load_before"
    echo "# -p $p -n $n -r $r -t $threads${dset:+ -d $depths}${batches:+ --batch $batches}, $rounds round(s) of ${refs[*]} then churon per model, thread count${dset:+ and depth}; raw: $out"
} >&2
# The first line of the raw file says what made the rest (compare.mjs prints it).
jstr() { node -p 'JSON.stringify(process.argv[1])' "$1"; }
echo "{\"meta\":{\"command\":$(jstr "$invocation"),\"date\":\"$(date -u +%FT%TZ)\",\"reference\":\"$reference\",\"references\":$(jstr "$refline"),\"churon\":$(jstr "$churon ($churon_desc)"),\"churon_cpu\":$(jstr "$churon_cpu"),\"cpu\":$(jstr "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) CPUs"),\"load_before\":\"$load_before\"}}" >>"$out"

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
# run ENGINE REFERENCE ROUND CMD...: run CMD, tag its JSON lines, and add how
# busy the rest of the machine was meanwhile (percent of all CPUs).
run() {
    local engine=$1 ref=$2 k=$3 res b0 c0 w0 b1 c1 w1 foreign tag
    shift 3
    wait_idle
    child_ms >"$timesf.c"; c0=$(<"$timesf.c")
    b0=$(busy_ms) w0=$(date +%s%3N)
    res=$("$@" 2>>"$log") || die "$engine${ref:+ ($ref)} run failed (see $log)"
    b1=$(busy_ms) w1=$(date +%s%3N)
    child_ms >"$timesf.c"; c1=$(<"$timesf.c")
    [[ -n $res ]] || die "$engine${ref:+ ($ref)} printed no result (see $log)"
    foreign=$(awk -v b=$((b1 - b0)) -v c=$((c1 - c0)) -v w=$((w1 - w0)) -v n="$ncpu" \
        'BEGIN { f = (b - c) / (w * n) * 100; if (f < 0) f = 0; printf "%.1f", f }')
    if [[ $engine == churon && -n $churon_cpu ]] && grep -qv "\"backend\":\"CPU $churon_cpu[ +]" <<<"$res"; then
        die "churon ran with CHURON_CPU=$churon_cpu but its backend says $(grep -o '"backend":"[^"]*"' <<<"$res" | head -1): this churon has no such level"
    fi
    tag="\"round\":$k,\"foreign_cpu_pct\":$foreign,"
    [[ -n $ref ]] && tag+="\"reference\":\"$ref\","
    sed -e "/^{\"engine\":/!s/^{/{\"engine\":\"$engine\",/" -e "s/^{/{$tag/" <<<"$res" >>"$out"
    echo "bench.sh:   others used $foreign % of the CPUs meanwhile" >&2
}
churon_env=()
if [[ -n $churon_cpu ]] && ((!no_churon)); then
    churon_env=(CHURON_CPU="$churon_cpu")
    # Before any long run: does this churon have that level at all?
    b=$(env "${churon_env[@]}" "$churon" info -m "${models[0]}" --json | grep -o '"Backend":"[^"]*"') ||
        die "churon info failed on ${models[0]}"
    [[ $b == "\"Backend\":\"CPU $churon_cpu "* || $b == "\"Backend\":\"CPU $churon_cpu+"* ]] ||
        die "churon with CHURON_CPU=$churon_cpu reports $b: this churon has no such level (pass --churon-cpu \"\" to run it as it is, knowing the comparison is not like for like)"
fi
for m in "${models[@]}"; do
    for t in "${tlist[@]}"; do
        for d in "${dlist[@]}"; do
            # At depth 0 no flag at all: the very commands of a run without -d.
            dflag=() at=""
            ((d > 0)) && dflag=(--depth "$d") at=" d=$d"
            for b in "${blist[@]}"; do
                bflag=() bat=""
                [[ -n $b ]] && bflag=(--batch "$b") bat=" batch $b"
                for ((k = 1; k <= rounds; k++)); do
                    for ref in "${refs[@]}"; do
                        echo "bench.sh: $(basename "$m") t=$t$at$bat round $k: llama.cpp ($ref)" >&2
                        if [[ $ref == prebuilt ]]; then
                            run llama.cpp "$ref" "$k" env LLAMACPP_BENCH_DIR="$moddir" node "$here/bench.mjs" -m "$m" -p "$p" -n "$n" -r "$r" -t "$t" "${dflag[@]}" --fa "$fa" --json
                        else
                            run llama.cpp "$ref" "$k" node "$here/llamabench.mjs" --build "$builds/$ref" -m "$m" -p "$p" -n "$n" -r "$r" -t "$t" -d "$d" --fa "$fa" "${bflag[@]}"
                        fi
                    done
                    ((no_churon)) && continue
                    echo "bench.sh: $(basename "$m") t=$t$at$bat round $k: churon${churon_cpu:+ (CHURON_CPU=$churon_cpu)}" >&2
                    run churon "" "$k" env "${churon_env[@]}" "$churon" bench -m "$m" -p "$p" -n "$n" -r "$r" -t "$t" "${dflag[@]}" "${bflag[@]}" --no-mmap --json
                done
            done
        done
    done
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
echo "# load after: $load_after" >&2
echo "{\"meta\":{\"load_after\":\"$load_after\"}}" >>"$out"

if ((asjson)); then
    node "$here/compare.mjs" "$out" --reference "$reference" --json
else
    node "$here/compare.mjs" "$out" --reference "$reference"
fi
