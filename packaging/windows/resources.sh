#!/usr/bin/env bash
# Writes the Windows resources (icon, version information, manifest) as a
# .syso object that `go build` links into the .exe:
#
#   packaging/windows/resources.sh SRCDIR ICONDIR
#
# SRCDIR is the copy of the tree being built (the object is written to its
# root as rsrc_windows_amd64.syso, so only Windows builds link it); ICONDIR
# is what packaging/icons.sh wrote (churon.ico holds 16…256 px).
# goversioninfo is the resource compiler fyne uses internally; run at a
# pinned version it adds nothing to go.mod.
set -euo pipefail
cd "$(dirname "$0")/../.."
. packaging/common.sh

src=${1:?usage: resources.sh SRCDIR ICONDIR}
icons=${2:?usage: resources.sh SRCDIR ICONDIR}
GOVERSIONINFO="github.com/josephspurrier/goversioninfo/cmd/goversioninfo@v1.7.0"

version=$(app_version)
build=$(app_build)
IFS=. read -r major minor patch <<<"$version"
fill() {
  sed -e "s/@MAJOR@/$major/g" -e "s/@MINOR@/$minor/g" -e "s/@PATCH@/$patch/g" \
    -e "s/@BUILD@/$build/g" -e "s/@VERSION@/$version/g" \
    -e "s/@FILEVERSION@/$major.$minor.$patch.$build/g" \
    -e "s/@COMMIT@/${COMMIT:-$(app_commit)}/g" -e "s/@DATE@/${DATE:-$(app_date)}/g" "$1"
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fill packaging/windows/versioninfo.json.in >"$tmp/versioninfo.json"
fill packaging/windows/churon.exe.manifest.in >"$tmp/churon.exe.manifest"
go run "$GOVERSIONINFO" -64 \
  -icon "$icons/churon.ico" -manifest "$tmp/churon.exe.manifest" \
  -o "$src/rsrc_windows_amd64.syso" "$tmp/versioninfo.json"
