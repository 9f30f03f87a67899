#!/usr/bin/env bash
# Builds the .deb, installs it with apt as a person would, checks what it
# installed and that `churon --version` runs from it, and removes it again.
# Needs root (CI runs as root) and a few minutes for the first build.
set -euo pipefail
cd "$(dirname "$0")/.."
. packaging/common.sh

[ "$(id -u)" = 0 ] || die "check-deb.sh installs a package: run it as root"
if dpkg -s churon >/dev/null 2>&1; then
  die "a churon package is already installed; remove it first (apt-get remove churon)"
fi
dist=$(mktemp -d)
trap 'rm -rf "$dist"' EXIT
DIST="$dist" bash packaging/package.sh deb
deb=$(ls "$dist"/churon_*.deb)

echo "==> apt-get install $deb"
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$deb" >/dev/null
status=0
got=$(churon --version 2>/dev/null) || status=$?
echo "    churon --version: $got"
case "$got" in
  "churon $(app_version) (commit "*", built "*")") ;;
  *) echo "packaging: the installed churon reports '$got' (exit $status)" >&2; status=1 ;;
esac
for f in /usr/bin/churon "/usr/share/applications/$APP_ID.desktop" \
  "/usr/share/metainfo/$APP_ID.metainfo.xml" "/usr/share/icons/hicolor/16x16/apps/$APP_ID.png" \
  "/usr/share/icons/hicolor/512x512/apps/$APP_ID.png" "/usr/share/icons/hicolor/scalable/apps/$APP_ID.svg"; do
  [ -s "$f" ] || { echo "packaging: the package did not install $f" >&2; status=1; }
done
echo "==> apt-get remove churon"
DEBIAN_FRONTEND=noninteractive apt-get remove -y -qq churon >/dev/null
[ ! -e /usr/bin/churon ] || { echo "packaging: /usr/bin/churon left behind" >&2; status=1; }
[ "$status" = 0 ] && echo "    .deb install, --version and removal: ok"
exit "$status"
