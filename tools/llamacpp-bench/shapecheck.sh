#!/usr/bin/env bash
# Checks that a `churon dev synth` shape is honest: llama.cpp loads the file,
# computes the same logits as churon, and (with --quantize) llama-quantize
# gives every tensor the type synth gave it. See README.md, "Shapes".
#
#   tools/llamacpp-bench/shapecheck.sh [options] SHAPE...
#
# Options:
#   --type T        file type (Q4_K_M)
#   --layers N      layers (2: the real width, vocabulary and output, few layers)
#   --vocab N       vocabulary override (default: the shape's own)
#   --churon PATH   churon binary (default: $CHURON, else built from this repo)
#   --quantize DIR  also quantize synth's F16 file of the same cut with
#                   DIR/bin/llama-quantize (a build.sh build) and compare the
#                   tensor types with synth's T file
#   --keep          keep the files (under the cache dir's shapecheck/)
# Every run prints the commands it made; exit 1 on the first disagreement.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
cache=${LLAMACPP_BENCH_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/churon/llamacpp-bench}
die() { echo "shapecheck.sh: $*" >&2; exit 1; }

type=Q4_K_M layers=2 vocab="" churon=${CHURON:-} quantize="" keep=0
shapes=()
while (($#)); do
    case $1 in
        --type) type=$2; shift 2 ;;
        --layers) layers=$2; shift 2 ;;
        --vocab) vocab=$2; shift 2 ;;
        --churon) churon=$2; shift 2 ;;
        --quantize) quantize=$2; shift 2 ;;
        --keep) keep=1; shift ;;
        -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) die "unknown option $1" ;;
        *) shapes+=("$1"); shift ;;
    esac
done
((${#shapes[@]})) || die "no shape given (e.g. llama3-8b qwen2.5-7b)"
[[ -z $quantize || -x $quantize/bin/llama-quantize ]] || die "no $quantize/bin/llama-quantize (run build.sh)"
"$here/bench.sh" --install
if [[ -z $churon ]]; then
    churon=$cache/churon
    (cd "$repo" && go build -o "$churon" .) || die "go build failed (pass --churon PATH)"
fi

if ((keep)); then
    dir=$cache/shapecheck
    mkdir -p "$dir"
else
    dir=$(mktemp -d)
    trap 'rm -rf "$dir"' EXIT
fi
run() { echo "+ $*" >&2; "$@"; }

for shape in "${shapes[@]}"; do
    tag=$shape-cut$layers${vocab:+-v$vocab}
    extra=(--layers "$layers")
    [[ -n $vocab ]] && extra+=(--vocab "$vocab")
    f=$dir/$tag-$type.gguf
    [[ -s $f ]] || run "$churon" dev synth --shape "$shape" --type "$type" --seed 1 "${extra[@]}" -o "$f"
    # BOS, then ids spread over the whole vocabulary (the output's last rows too).
    n=$("$churon" info -m "$f" --json | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).VocabSize))')
    ids=$(awk -v n="$n" 'BEGIN { x = 12345; s = "1"; for (i = 1; i < 24; i++) { x = (x * 1103515245 + 12345) % 2147483648; s = s "," (3 + x % (n - 3)) } print s }')
    ref=${f%.gguf}.ref.json bin=${f%.gguf}.churon.bin
    run node "$here/logits.mjs" -m "$f" --ids "$ids" --kv f32 --fa off --no-full >/dev/null # loads at all?
    run node "$here/logits.mjs" -m "$f" --ids "$ids" --kv f32 --fa off --out "$ref"
    run "$churon" logits -m "$f" --tokens "$ids" --all --kv f32 --out "$bin"
    bar=0.999
    [[ $type == F16 || $type == F32 || $type == BF16 || $type == Q8_0 ]] && bar=0.9999
    echo "shapecheck.sh: $shape $type, $layers layers: logits of llama.cpp and churon" >&2
    run node "$here/shapecheck.mjs" logits "$ref" "$bin" --min-cos "$bar"
    if [[ -n $quantize ]]; then
        f16=$dir/$tag-F16.gguf
        q=${f%.gguf}.llama-quantize.gguf
        [[ -s $f16 ]] || run "$churon" dev synth --shape "$shape" --type F16 --seed 1 "${extra[@]}" -o "$f16"
        run "$quantize/bin/llama-quantize" "$f16" "$q" "$type" "$(nproc)" >"$q.log" 2>&1 ||
            die "llama-quantize failed (see $q.log)"
        echo "shapecheck.sh: $shape $type, $layers layers: tensor types of synth and llama-quantize" >&2
        run node "$here/shapecheck.mjs" types "$f" "$q"
    fi
    ((keep)) || rm -f "$dir"/*
done
