#!/usr/bin/env bash
# Cheap packaging checks for every test run (seconds): everything that
# does not need Fyne's cgo window builds and vets for macOS (arm64 and
# amd64: the engine with the Metal backend, the session manager, the
# headless commands, gpucheck) with CGO_ENABLED=0, the pure-Go engine
# cross-compiles for Windows, the AppStream file and the .desktop entry
# validate, the version in FyneApp.toml is well-formed.
# The packages themselves take minutes: packaging/package.sh,
# packaging/check-deb.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
. packaging/common.sh

echo "    version $(app_version), build $(app_build)"
# The packages that must never need Fyne (so never cgo): a headless build
# for macOS is made of them.
headless="./engine/... ./app/... ./cli ./serve ./models/... ./internal/gpucheck ./tools/gpucheck"
for t in darwin/arm64 darwin/amd64; do
  export GOOS=${t%/*} GOARCH=${t#*/} CGO_ENABLED=0
  fyne=$(go list -e -deps -f '{{if eq .ImportPath "fyne.io/fyne/v2"}}yes{{end}}' $headless | sort -u)
  if [ -n "$fyne" ]; then
    echo "packaging: a headless package imports Fyne on $t:"
    go list -e -f '{{.ImportPath}}{{range .Deps}}{{if eq . "fyne.io/fyne/v2"}} <- fyne{{end}}{{end}}' $headless | grep fyne
    exit 1
  fi
  # Every package with Go files whose dependencies leave Fyne out.
  pkgs=$(go list -e -f '{{$f := false}}{{range .Deps}}{{if eq . "fyne.io/fyne/v2"}}{{$f = true}}{{end}}{{end}}{{if and (not $f) .GoFiles}}{{.ImportPath}}{{end}}' ./... | grep .)
  echo "    GOOS=$GOOS GOARCH=$GOARCH CGO_ENABLED=0 go build + go vet: $(echo "$pkgs" | wc -l) packages without Fyne (engine, metal, app, cli, serve, gpucheck, …)"
  go build $pkgs
  go vet $pkgs
  unset GOOS GOARCH CGO_ENABLED
done
echo "    GOOS=windows GOARCH=amd64 CGO_ENABLED=0 go build ./engine/..."
GOOS=windows GOARCH=amd64 CGO_ENABLED=0 go build ./engine/...
need_cmds desktop-file-validate:desktop-file-utils
desktop-file-validate "packaging/linux/$APP_ID.desktop"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bash packaging/linux/metainfo.sh "$tmp/$APP_ID.metainfo.xml"
