#!/usr/bin/env bash
# Builds Churon's packages into dist/ (or $DIST) with SHA256SUMS:
#
#   packaging/package.sh [linux] [deb] [windows]   (default: all three)
#
#   linux    churon-VERSION-linux-ARCH.tar.xz  (fyne package: binary,
#            .desktop entry and icon, with a Makefile for `make install`)
#   deb      churon_VERSION_ARCH.deb           (the same binary, dpkg-deb)
#   windows  churon-VERSION-windows-amd64.exe  (cross-built with mingw-w64:
#            icon, version information and manifest linked in)
#
# The build happens in a temporary copy of the tree (tracked files plus
# untracked ones git does not ignore), because fyne rewrites FyneApp.toml,
# bumps its Build and drops generated Go files next to main.go: the
# working tree is never written to, except dist/. macOS packages are built
# on a Mac: see packaging/macos/README.md.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib.sh
. packaging/common.sh

targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(linux deb windows)
for t in "${targets[@]}"; do
  case "$t" in linux | deb | windows) ;; *) die "unknown target '$t' (linux, deb, windows)" ;; esac
done
want() { [[ " ${targets[*]} " == *" $1 "* ]]; }

require_go
require_gui_deps
need_cmds tar:tar xz:xz-utils sha256sum:coreutils
want deb && need_cmds dpkg-deb:dpkg objdump:binutils
want windows && need_cmds x86_64-w64-mingw32-gcc:gcc-mingw-w64-x86-64
need_fyne

VERSION=$(app_version)
BUILD=$(app_build)
COMMIT=$(app_commit)
DATE=$(app_date)
export VERSION BUILD COMMIT DATE
ARCH=$(go env GOARCH)
DIST=$(mkdir -p "${DIST:-dist}" && cd "${DIST:-dist}" && pwd)
echo "==> Churon $VERSION (build $BUILD, commit $COMMIT, $DATE) into $DIST"

work=$(mktemp -d)
if [ -n "${KEEP_WORK:-}" ]; then
  echo "==> work directory kept: $work"
else
  trap 'rm -rf "$work"' EXIT
fi

# The copy to build from. Without git (a source tarball) everything but
# build outputs is copied.
src="$work/src"
mkdir -p "$src"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  git ls-files -z --cached --others --exclude-standard |
    while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
    tar --null -T - -cf - | tar -xf - -C "$src"
else
  tar --exclude=./.git --exclude=./dist --exclude=./bin -cf - . | tar -xf - -C "$src"
fi
# fyne reads the build number from FyneApp.toml: pin it to the version's.
sed -i -e '/^Build *=/d' -e "s/^Version *=.*/&\nBuild = $BUILD/" "$src/FyneApp.toml"
grep -q "^Build = $BUILD\$" "$src/FyneApp.toml" || die "could not set Build in the copy of FyneApp.toml"

bash packaging/icons.sh "$work/icons" >/dev/null

# fyne passes -ldflags= entries of GOFLAGS on to go build (and adds -s -w
# for --release); the values have no spaces, as GOFLAGS requires.
goflags="$(go env GOFLAGS)"
for f in $(go_ldflags); do goflags="$goflags -ldflags=$f"; done

tarball="$DIST/churon-$VERSION-linux-$ARCH.tar.xz"
if want linux || want deb; then
  echo "==> fyne package -os linux"
  # -buildmode=pie: a position-independent binary, as Debian builds
  # (lintian's hardening-no-pie); Windows executables are PIE already.
  (cd "$src" && GOFLAGS="$goflags -buildmode=pie" fyne package -os linux --release \
    --icon "$work/icons/icon-512.png")
  mv "$src/$APP_NAME.tar.xz" "$tarball"
  # The archive must hold what a person installs: binary, entry, icon.
  mkdir -p "$work/tar"
  tar -xJf "$tarball" -C "$work/tar"
  # (fyne puts them under usr/local/ when the packaging machine has one.)
  tarred() { find "$work/tar" -path "*/usr/$1" -type f -size +0 | head -n1; }
  for f in "bin/churon" "share/applications/$APP_ID.desktop" "share/pixmaps/$APP_ID.png"; do
    [ -n "$(tarred "$f")" ] || [ -n "$(tarred "local/$f")" ] || die "$tarball lacks usr/$f"
  done
  entry=$(find "$work/tar" -name "$APP_ID.desktop")
  if command -v desktop-file-validate >/dev/null 2>&1; then
    desktop-file-validate "$entry" || die "the .desktop entry in $tarball is not valid"
  fi
  echo "    $(basename "$tarball"): $(du -h "$tarball" | cut -f1)"
fi

if want deb; then
  echo "==> dpkg-deb"
  bin=$(find "$work/tar" -path '*/bin/churon' -type f)
  reported=$("$bin" --version 2>/dev/null)
  [ "$reported" = "churon $VERSION (commit $COMMIT, built $DATE)" ] ||
    die "the packaged binary reports '$reported'"
  deb=$(bash packaging/linux/deb.sh "$bin" "$work/icons" "$DIST")
  echo "    $(basename "$deb"): $(du -h "$deb" | cut -f1)"
fi
if want deb && ! want linux; then rm -f "$tarball"; fi

if want windows; then
  echo "==> fyne build -os windows (mingw-w64)"
  bash packaging/windows/resources.sh "$src" "$work/icons"
  exe="$DIST/churon-$VERSION-windows-amd64.exe"
  (cd "$src" && GOFLAGS="$goflags" GOOS=windows GOARCH=amd64 \
    CC=x86_64-w64-mingw32-gcc CXX=x86_64-w64-mingw32-g++ \
    fyne build -os windows --release -o "$exe")
  echo "    $(basename "$exe"): $(du -h "$exe" | cut -f1)"
fi

echo "==> SHA256SUMS"
# Every package of this version in dist/, including those of earlier runs
# (make package-linux, then make package-windows); other versions' files
# are left out.
sums=$(cd "$DIST" && find . -maxdepth 1 -type f -name "churon[-_]${VERSION}[-_]*" -printf '%P\0' | sort -z |
  xargs -0 -r sha256sum --)
printf '%s\n' "$sums" >"$DIST/SHA256SUMS"
cat "$DIST/SHA256SUMS"
