# shellcheck shell=bash
# Shared by the packaging scripts: the app's identity, the version and the
# tools they need. Sourced, never run. Everything about the version comes
# from FyneApp.toml, the one place it is written.

# shellcheck disable=SC2034 # used by the scripts that source this file
APP_ID="io.github.churon.Churon"
# shellcheck disable=SC2034
APP_NAME="Churon"
GO_PKG="github.com/churon/churon"

# die prints a message and stops the script.
die() {
  echo "packaging: $*" >&2
  exit 1
}

# toml_value KEY prints the value of KEY in FyneApp.toml's [Details].
toml_value() {
  sed -n '/^\[Details\]/,/^\[/{s/^'"$1"' *= *"\{0,1\}\([^"]*\)"\{0,1\} *$/\1/p}' FyneApp.toml
}

# app_version prints the version (x.y.z) from FyneApp.toml.
app_version() {
  local v
  v=$(toml_value Version)
  case "$v" in
    [0-9]*.[0-9]*.[0-9]*) ;;
    *) die "FyneApp.toml: Version must be x.y.z, found '$v'" ;;
  esac
  echo "$v"
}

# app_build prints the build number derived from the version:
# major*10000 + minor*100 + patch. It only grows when the version does, is
# the same on every machine, and fits Windows' 16-bit FileVersion field
# (so minor and patch must stay below 100 and major below 6).
app_build() {
  local v major minor patch
  v=$(app_version)
  IFS=. read -r major minor patch <<<"${v%%[-+]*}"
  if [ "$minor" -ge 100 ] || [ "$patch" -ge 100 ] || [ "$major" -ge 6 ]; then
    die "version $v does not fit the build number scheme major*10000+minor*100+patch"
  fi
  echo $((10#$major * 10000 + 10#$minor * 100 + 10#$patch))
}

# app_commit prints the short commit hash, with -dirty when tracked files
# differ from it (untracked files do not count).
app_commit() {
  local c
  c=$(git rev-parse --short=12 HEAD 2>/dev/null) || { echo unknown; return; }
  if [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]; then
    c="$c-dirty"
  fi
  echo "$c"
}

# app_date prints the build time in UTC, ISO 8601; SOURCE_DATE_EPOCH pins
# it for reproducible builds.
app_date() {
  if [ -n "${SOURCE_DATE_EPOCH:-}" ]; then
    date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ
  else
    date -u +%Y-%m-%dT%H:%M:%SZ
  fi
}

# go_ldflags prints the -X flags that set `churon --version`'s output.
# Values contain no spaces, so the list also survives GOFLAGS.
go_ldflags() {
  echo "-X=$GO_PKG/cli.Version=${VERSION:-$(app_version)}" \
    "-X=$GO_PKG/cli.Commit=${COMMIT:-$(app_commit)}" \
    "-X=$GO_PKG/cli.Date=${DATE:-$(app_date)}"
}

# need_cmds CMD:DEBIAN_PACKAGE... installs the Debian packages of the
# commands that are missing (as root, or with sudo that needs no password),
# or names them and stops.
need_cmds() {
  local missing=() spec
  for spec in "$@"; do
    command -v "${spec%%:*}" >/dev/null 2>&1 || missing+=("${spec#*:}")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  if command -v apt-get >/dev/null 2>&1; then
    local sudo=()
    if [ "$(id -u)" != 0 ]; then
      if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
        sudo=(sudo)
      else
        die "missing tools; install them with: sudo apt-get install ${missing[*]}"
      fi
    fi
    echo "==> installing ${missing[*]}" >&2
    if ! { "${sudo[@]}" apt-get update -qq >&2 &&
      "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >&2; }; then
      die "apt-get install ${missing[*]} failed"
    fi
    return 0
  fi
  die "missing tools (Debian package names): ${missing[*]}"
}

# FYNE_TOOLS_VERSION is the fyne command that builds the packages; it was
# seen to work with Fyne v2.7.1. need_fyne puts it on PATH.
FYNE_TOOLS_VERSION="v1.7.4"
need_fyne() {
  local gobin
  gobin="$(go env GOPATH | cut -d: -f1)/bin"
  export PATH="$gobin:$PATH"
  local have
  have=$(fyne version 2>&1 || true)
  if [[ "$have" != *"cli version: $FYNE_TOOLS_VERSION"* ]]; then
    echo "==> go install fyne.io/tools/cmd/fyne@$FYNE_TOOLS_VERSION" >&2
    go install "fyne.io/tools/cmd/fyne@$FYNE_TOOLS_VERSION" || die "could not install the fyne command"
  fi
}
