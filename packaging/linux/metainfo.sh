#!/usr/bin/env bash
# Writes the AppStream metainfo file with the version from FyneApp.toml and
# validates it: packaging/linux/metainfo.sh OUTFILE. The release date is the
# day of the last commit that touched FyneApp.toml (where the version is
# set), so the file is the same on every machine for a given commit.
set -euo pipefail
cd "$(dirname "$0")/../.."
. packaging/common.sh

out=${1:?usage: packaging/linux/metainfo.sh OUTFILE}
need_cmds appstreamcli:appstream

version=$(app_version)
day=$(git log -1 --format=%cs -- FyneApp.toml 2>/dev/null || true)
[ -n "$day" ] || day=$(app_date | cut -dT -f1)

sed -e "s/@VERSION@/$version/g" -e "s/@DATE@/$day/g" \
  "packaging/linux/$APP_ID.metainfo.xml.in" >"$out"
# --no-net: the screenshot and homepage URLs are not fetched (CI has no
# network); everything else, including the pedantic hints, is checked.
appstreamcli validate --no-net --pedantic --explain "$out"
