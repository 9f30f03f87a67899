#!/usr/bin/env bash
# Prepares the GPU check (run.sh) on a development machine: the kernel
# test binary, the gpucheck program and the small models of the
# end-to-end check, into tools/gpucheck/bundle (ignored by git). The
# machine with the GPU needs no Go toolchain: see README.md.
#
# GPUCHECK_TARGET is the GPU machine's GOOS/GOARCH: linux/amd64 (the
# default: the CUDA backend), windows/amd64, or darwin/arm64 (a Mac with
# Apple silicon: the Metal backend; see packaging/macos/README.md).
set -euo pipefail
cd "$(dirname "$0")/../.."
td="${CHURON_TESTDATA:-../shared/testdata}"
out=tools/gpucheck/bundle
if [ ! -f "$td/models/stories260K.gguf" ]; then
  echo "build.sh: no test data at $td (set CHURON_TESTDATA)" >&2; exit 1
fi
rm -rf "$out"
mkdir -p "$out/testdata/models" "$out/testdata/quantzoo"
# CGO_ENABLED=0: no C library beyond the loader's, whatever the GPU machine has.
target=${GPUCHECK_TARGET:-linux/amd64}
export CGO_ENABLED=0 GOOS=${target%/*} GOARCH=${target#*/}
case "$GOOS" in
  darwin) backend=metal ;;
  linux|windows) backend=cuda ;;
  *) echo "build.sh: no GPU backend for $target" >&2; exit 1 ;;
esac
go test -c -o "$out/$backend.test" "./engine/backend/$backend"
go build -trimpath -o "$out/gpucheck" ./tools/gpucheck
echo "$target $backend" > "$out/target"
cp "$td/models/stories260K.gguf" "$out/testdata/models/"
for t in F32 F16 BF16 Q8_0 Q4_0 Q4_1 Q5_0 Q5_1 Q4_K Q5_K Q6_K Q4_K_M-mixed; do
  cp "$td/quantzoo/zoo-$t.gguf" "$out/testdata/quantzoo/"
done
git rev-parse HEAD > "$out/commit" 2>/dev/null || echo unknown > "$out/commit"
git status --porcelain --untracked-files=no | grep -q . && echo "(with uncommitted changes)" >> "$out/commit"
size=$(du -sm "$out" | cut -f1)
echo "tools/gpucheck/bundle: ${size} MiB (the device tool carries up to 64 MiB)"
[ "$size" -lt 64 ] || { echo "build.sh: the bundle is too large to carry" >&2; exit 1; }
