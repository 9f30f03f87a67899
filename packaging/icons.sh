#!/usr/bin/env bash
# Renders Churon's icon (assets/icon.svg, and assets/icon-small.svg for the
# sizes up to 32 px where the full mark would blur) to what the platforms
# need, with rsvg-convert (Debian: librsvg2-bin) and icotool (icoutils).
#
#   packaging/icons.sh OUTDIR   hicolor/NxN/apps/$APP_ID.png for 16…512,
#                               hicolor/scalable/apps/$APP_ID.svg,
#                               icon-512.png (fyne package), churon.ico
#                               (Windows: 16…256 in one file) and
#                               icon-macos-1024.png (macOS icon grid:
#                               the mark inset to about 824 px)
#   packaging/icons.sh --assets re-renders assets/icon-256.png, the icon
#                               the app embeds (run it after editing the SVG)
set -euo pipefail
cd "$(dirname "$0")/.."
. packaging/common.sh

need_cmds rsvg-convert:librsvg2-bin icotool:icoutils

BIG=assets/icon.svg
SMALL=assets/icon-small.svg

# render SIZE OUT draws the mark at SIZE×SIZE pixels.
render() {
  local src=$BIG
  [ "$1" -le 32 ] && src=$SMALL
  rsvg-convert --width "$1" --height "$1" --keep-aspect-ratio "$src" -o "$2"
}

if [ "${1:-}" = "--assets" ]; then
  render 256 assets/icon-256.png
  echo "assets/icon-256.png: $(wc -c <assets/icon-256.png) bytes"
  exit 0
fi

out=${1:?usage: packaging/icons.sh OUTDIR | --assets}
mkdir -p "$out"
ico_parts=()
for s in 16 24 32 48 64 128 256 512; do
  d="$out/hicolor/${s}x${s}/apps"
  mkdir -p "$d"
  render "$s" "$d/$APP_ID.png"
  [ "$s" -le 256 ] && ico_parts+=("$d/$APP_ID.png")
done
mkdir -p "$out/hicolor/scalable/apps"
cp "$BIG" "$out/hicolor/scalable/apps/$APP_ID.svg"
cp "$out/hicolor/512x512/apps/$APP_ID.png" "$out/icon-512.png"

# Windows keeps the 256 px image PNG-compressed (-r); smaller ones as
# bitmaps, which every version of Explorer reads.
icotool --create -o "$out/churon.ico" \
  "${ico_parts[@]:0:6}" --raw="${ico_parts[6]}"

# macOS draws app icons on a 1024 grid with the artwork inside ~824 px;
# widening the viewBox adds the margin without a second drawing.
sed 's/viewBox="0 0 512 512"/viewBox="-62 -62 636 636"/' "$BIG" |
  rsvg-convert --width 1024 --height 1024 -o "$out/icon-macos-1024.png"
echo "icons written to $out"
