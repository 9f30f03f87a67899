#!/bin/sh
# gen.sh rebuilds engine/quant/testdata/mxfp4_ggml.json: ggml's own MXFP4
# dequantization and quantization (llama.cpp v0.5.0's ggml-quants.c, from
# the source bundle node-llama-cpp ships) of the inputs mxfp4ref.c makes.
# Needs git and a C compiler; run from anywhere.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bundle=${LLAMACPP_BUNDLE:-$HOME/.cache/churon/llamacpp-bench/node_modules/node-llama-cpp/llama/gitRelease.bundle}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
git -c advice.detachedHead=false clone -q "$bundle" "$work/llama.cpp"
src=$work/llama.cpp/ggml
# Only the two row functions are needed; the linker drops the rest of
# ggml-quants.c (and its references into ggml.c).
${CC:-cc} -O2 -std=c11 -w -ffunction-sections -fdata-sections -Wl,--gc-sections \
	-I"$src/include" -I"$src/src" -o "$work/mxfp4ref" \
	"$here/mxfp4ref.c" "$src/src/ggml-quants.c" -lm
mkdir -p "$root/engine/quant/testdata"
"$work/mxfp4ref" >"$root/engine/quant/testdata/mxfp4_ggml.json"
echo "wrote engine/quant/testdata/mxfp4_ggml.json from $(git -C "$work/llama.cpp" rev-parse --short HEAD)"
