#!/usr/bin/env bash
# Cheap packaging checks for every test run (seconds): the pure-Go engine
# cross-compiles for macOS and Windows, the AppStream file and the
# .desktop entry validate, the version in FyneApp.toml is well-formed.
# The packages themselves take minutes: packaging/package.sh,
# packaging/check-deb.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
. packaging/common.sh

echo "    version $(app_version), build $(app_build)"
for t in darwin/arm64 darwin/amd64 windows/amd64; do
  echo "    GOOS=${t%/*} GOARCH=${t#*/} CGO_ENABLED=0 go build ./engine/..."
  GOOS=${t%/*} GOARCH=${t#*/} CGO_ENABLED=0 go build ./engine/...
done
need_cmds desktop-file-validate:desktop-file-utils
desktop-file-validate "packaging/linux/$APP_ID.desktop"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bash packaging/linux/metainfo.sh "$tmp/$APP_ID.metainfo.xml"
