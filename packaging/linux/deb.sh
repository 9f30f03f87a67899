#!/usr/bin/env bash
# Builds churon_VERSION_ARCH.deb with dpkg-deb from a built binary:
#
#   packaging/linux/deb.sh BINARY ICONDIR OUTDIR
#
# ICONDIR is what packaging/icons.sh wrote. The package installs
# /usr/bin/churon, the .desktop entry, the AppStream metainfo and the icon
# theme files; dpkg's triggers (hicolor-icon-theme, desktop-file-utils)
# refresh the icon cache and menu, so it needs no maintainer scripts.
set -euo pipefail
cd "$(dirname "$0")/../.."
. packaging/common.sh

bin=${1:?usage: deb.sh BINARY ICONDIR OUTDIR}
icons=${2:?usage: deb.sh BINARY ICONDIR OUTDIR}
outdir=${3:?usage: deb.sh BINARY ICONDIR OUTDIR}
need_cmds dpkg-deb:dpkg objdump:binutils gzip:gzip

version=$(app_version)
arch=$(dpkg --print-architecture)

# Shared libraries the binary may load and the Debian packages that ship
# them. Fyne's GLFW driver links OpenGL and X11; the rest is glibc.
declare -A lib_pkg=(
  [libGL.so.1]=libgl1 [libX11.so.6]=libx11-6 [libXcursor.so.1]=libxcursor1
  [libXrandr.so.2]=libxrandr2 [libXinerama.so.1]=libxinerama1 [libXi.so.6]=libxi6
  [libXxf86vm.so.1]=libxxf86vm1
  [libc.so.6]=libc6 [libm.so.6]=libc6 [libdl.so.2]=libc6 [libpthread.so.0]=libc6
  [librt.so.1]=libc6 [libresolv.so.2]=libc6
)
# What the package declares: every library above, whether or not this
# build happens to link it, so a driver change cannot drop one silently.
depends_pkgs="libgl1, libx11-6, libxcursor1, libxrandr2, libxinerama1, libxi6, libxxf86vm1"

# Refuse a binary that needs a library the table does not know: its
# package would be missing from Depends.
needed=$(objdump -p "$bin" | awk '$1 == "NEEDED" {print $2}')
[ -n "$needed" ] || die "$bin: no NEEDED entries (not a dynamically linked ELF file?)"
for lib in $needed; do
  [ -n "${lib_pkg[$lib]:-}" ] || die "$bin needs $lib, which deb.sh does not map to a Debian package: add it to lib_pkg and Depends"
done

# The newest glibc symbol version the binary uses is the oldest libc6 it
# runs on.
glibc=$(objdump -T "$bin" | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -n1)
[ -n "$glibc" ] || die "$bin: no GLIBC symbol versions found"

root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
chmod 0755 "$root" # mktemp's 0700 would become the mode of / in the archive
install -Dm755 "$bin" "$root/usr/bin/churon"
install -Dm644 "packaging/linux/$APP_ID.desktop" "$root/usr/share/applications/$APP_ID.desktop"
mkdir -p "$root/usr/share/metainfo"
bash packaging/linux/metainfo.sh "$root/usr/share/metainfo/$APP_ID.metainfo.xml" >/dev/null
(cd "$icons" && find hicolor -type f) | while read -r f; do
  install -Dm644 "$icons/$f" "$root/usr/share/icons/$f"
done
doc="$root/usr/share/doc/churon"
mkdir -p "$doc"
cat >"$doc/copyright" <<EOF
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: Churon
Source: https://github.com/churon/churon

Files: *
Copyright: The Churon developers
License: see the project's repository
EOF
printf 'churon (%s) unstable; urgency=medium\n\n  * Release %s; see https://github.com/churon/churon\n\n -- The Churon developers <churon@users.noreply.github.com>  %s\n' \
  "$version" "$version" "$(date -u -R -d "$(git log -1 --format=%cI -- FyneApp.toml 2>/dev/null || date -u -Iseconds)")" |
  gzip -9n >"$doc/changelog.gz"

mkdir -p "$root/DEBIAN"
cat >"$root/DEBIAN/control" <<EOF
Package: churon
Version: $version
Architecture: $arch
Maintainer: The Churon developers <churon@users.noreply.github.com>
Installed-Size: $(du -sk --exclude=DEBIAN "$root" | cut -f1)
Depends: libc6 (>= $glibc), $depends_pkgs
Recommends: fonts-noto-cjk
Section: utils
Priority: optional
Homepage: https://github.com/churon/churon
Description: chat with large language models on your own computer
 Churon runs GGUF language models locally, offline, with its own
 inference engine: a desktop chat window with streamed Markdown answers
 and a searchable history, Korean and English, and a command line
 (churon generate, chat, bench) for scripting.
 .
 Korean is drawn from fonts Churon carries; a CJK font (fonts-noto-cjk)
 is recommended for Chinese and Japanese text, which models often write.
EOF

mkdir -p "$outdir"
deb="$outdir/churon_${version}_${arch}.deb"
dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >/dev/null
echo "$deb"
