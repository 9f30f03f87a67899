#!/usr/bin/env bash
# Builds llama.cpp's llama-bench, llama-batched-bench and llama-quantize from the source node-llama-cpp
# ships (llama/gitRelease.bundle: llama.cpp v0.5.0), for the CPU this runs on,
# outside the repository. See README.md, "Builds for this CPU".
#
#   tools/llamacpp-bench/build.sh [native|avx2]...     # default: native avx2
#
#   native  GGML_NATIVE=ON: -march=native, every extension this CPU has
#   avx2    GGML_NATIVE=OFF with AVX, AVX2, FMA, F16C, BMI2 and (where this CPU has it) AVX-VNNI on and
#           every AVX-512 and AMX option off: what an Intel 12th–14th gen
#           desktop (Alder Lake, Raptor Lake) runs
#
# Each build goes to $LLAMACPP_BUILD_DIR/NAME (default
# ${XDG_CACHE_HOME:-~/.cache}/churon/llamacpp-build/NAME), binaries in NAME/bin,
# and NAME/build-info.txt records the source commit, the cmake flags, the
# compiler, the CPU and how long the build took. A finished build is kept
# (delete NAME to rebuild). Environment: LLAMACPP_BENCH_DIR (where bench.sh
# installed node-llama-cpp), JOBS (parallel jobs; default nproc).
set -euo pipefail

cache=${XDG_CACHE_HOME:-$HOME/.cache}/churon
bench_dir=${LLAMACPP_BENCH_DIR:-$cache/llamacpp-bench}
root=${LLAMACPP_BUILD_DIR:-$cache/llamacpp-build}
bundle=$bench_dir/node_modules/node-llama-cpp/llama/gitRelease.bundle
jobs=${JOBS:-$(nproc)}

die() { echo "build.sh: $*" >&2; exit 1; }

variants=("$@")
((${#variants[@]})) || variants=(native avx2)

common=(-DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF
    -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF
    -DLLAMA_BUILD_SERVER=OFF -DGGML_BACKEND_DL=OFF -DGGML_CPU_ALL_VARIANTS=OFF)
# AVX-VNNI (the VEX form of VPDPBUSD that Alder Lake and later have) only
# where this CPU has it: Zen 4 and Zen 5 have AVX512_VNNI but not AVX-VNNI,
# and a build with it dies there with SIGILL on the first product.
avx_vnni=OFF
grep -qw avx_vnni /proc/cpuinfo 2>/dev/null && avx_vnni=ON
flags_for() {
    case $1 in
        native) echo -DGGML_NATIVE=ON ;;
        avx2) echo -DGGML_NATIVE=OFF -DGGML_SSE42=ON -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON \
            -DGGML_F16C=ON -DGGML_BMI2=ON -DGGML_AVX_VNNI=$avx_vnni -DGGML_AVX512=OFF -DGGML_AVX512_VBMI=OFF \
            -DGGML_AVX512_VNNI=OFF -DGGML_AVX512_BF16=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF ;;
        *) die "unknown build '$1' (native or avx2)" ;;
    esac
}
for v in "${variants[@]}"; do flags_for "$v" >/dev/null; done

# resolved FLAGS...: the -march and the x86 extensions the compiler enables
# with FLAGS (AVX and up: the ones the kernels choose between).
resolved() {
    cc "$@" -Q --help=target 2>/dev/null | awk '
        $1 == "-march=" { arch = $2 }
        $2 == "[enabled]" && $1 ~ /^-m(avx|fma|f16c|amx|bmi2)/ { sub(/^-m/, "", $1); ext = ext " " $1 }
        END { printf "-march=%s,%s\n", arch, ext }'
}

command -v cmake >/dev/null || die "cmake not found"
command -v git >/dev/null || die "git not found"
[[ -f $bundle ]] || die "no $bundle (run tools/llamacpp-bench/bench.sh --install first)"

# One source tree for all builds, at the bundle's commit.
src=$root/src
if [[ ! -d $src/.git ]]; then
    mkdir -p "$root"
    git clone -q "$bundle" "$src.tmp" 2>/dev/null || git clone "$bundle" "$src.tmp"
    mv "$src.tmp" "$src"
fi
commit=$(git -C "$src" rev-parse HEAD)
want=$(git bundle list-heads "$bundle" | awk 'NR == 1 { print $1 }')
[[ $commit == "$want" ]] || die "$src is at $commit, the bundle at $want: delete $src"
release=$(node -p "require('$bench_dir/node_modules/node-llama-cpp/llama/binariesGithubRelease.json').release" 2>/dev/null || echo unknown)

for v in "${variants[@]}"; do
    out=$root/$v
    if [[ -x $out/bin/llama-bench && -x $out/bin/llama-quantize && -s $out/build-info.txt ]]; then
        echo "build.sh: $v already built in $out ($(grep '^took' "$out/build-info.txt"))" >&2
        # Builds from before llama-batched-bench was wanted: its one source
        # file on top of the libraries already there, same flags.
        if [[ ! -x $out/bin/llama-batched-bench ]]; then
            [[ -f $out/cmake/CMakeCache.txt ]] || die "$out has no llama-batched-bench and no cmake tree to add it to: delete $out"
            nice -n 5 cmake --build "$out/cmake" --target llama-batched-bench -j "$jobs" >>"$out/cmake.log" 2>&1 ||
                die "build of llama-batched-bench for $v failed (see $out/cmake.log)"
            cp "$out/cmake/bin/llama-batched-bench" "$out/bin/"
            echo "build.sh: added llama-batched-bench to $v" >&2
        fi
        continue
    fi
    read -r -a vflags <<<"$(flags_for "$v")"
    bdir=$out/cmake
    rm -rf "$out"
    mkdir -p "$out/bin"
    echo "build.sh: building $v in $out (load $(cut -d' ' -f1-3 /proc/loadavg), $jobs jobs)" >&2
    t0=$SECONDS
    nice -n 5 cmake -S "$src" -B "$bdir" "${common[@]}" "${vflags[@]}" >"$out/cmake.log" 2>&1 ||
        die "cmake configure of $v failed (see $out/cmake.log)"
    nice -n 5 cmake --build "$bdir" --target llama-bench llama-batched-bench llama-quantize -j "$jobs" >>"$out/cmake.log" 2>&1 ||
        die "build of $v failed (see $out/cmake.log)"
    took=$((SECONDS - t0))
    cp "$bdir/bin/llama-bench" "$bdir/bin/llama-batched-bench" "$bdir/bin/llama-quantize" "$out/bin/"
    # What the binary really uses: AVX-512 touches zmm registers; VNNI is
    # vpdpbusd (VEX-encoded for AVX-VNNI, EVEX for AVX-512 VNNI).
    isa="not counted (no objdump)"
    if command -v objdump >/dev/null; then
        dis=$(objdump -d --no-show-raw-insn "$out/bin/llama-bench")
        zmm=$(grep -c zmm <<<"$dis" || true)
        isa="$zmm instructions on zmm registers, $(grep -c ymm <<<"$dis" || true) on ymm, $(grep -c vpdpbusd <<<"$dis" || true) vpdpbusd"
        [[ $v != avx2 || $zmm == 0 ]] || die "the avx2 build uses AVX-512 ($zmm instructions on zmm registers)"
    fi
    # The flags ggml-cpu was compiled with, and what the compiler made of
    # them: -march=native is whatever this compiler knows of this CPU.
    archflags=$(grep -ho -- '-m[a-z0-9.=-]*' "$bdir/ggml/src/CMakeFiles/ggml-cpu.dir/flags.make" 2>/dev/null | sort -u | tr '\n' ' ')
    {
        echo "build $v"
        echo "source llama.cpp $release, commit $commit (node-llama-cpp's gitRelease.bundle)"
        echo "cmake ${common[*]} ${vflags[*]}"
        echo "ggml-cpu arch flags $archflags"
        echo "compiler resolves them to $(resolved $archflags)"
        echo "compiler $(cc --version | head -1)"
        echo "llama-bench has $isa"
        echo "cpu $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) CPUs"
        echo "date $(date -u +%FT%TZ)"
        echo "took ${took}s with $jobs jobs (load at the end $(cut -d' ' -f1-3 /proc/loadavg))"
    } >"$out/build-info.txt"
    echo "build.sh: $v done in ${took}s: $out/bin/llama-bench" >&2
done
