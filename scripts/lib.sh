# Shared by scripts/run and scripts/test.

GO_MIN=1.26

# require_go makes sure a Go toolchain of at least GO_MIN is on PATH,
# looking in /usr/local/go too, or says exactly what to install.
require_go() {
  if ! command -v go >/dev/null 2>&1 && [ -x /usr/local/go/bin/go ]; then
    export PATH="/usr/local/go/bin:$PATH"
  fi
  if ! command -v go >/dev/null 2>&1; then
    echo "churon: Go $GO_MIN or newer is required and was not found." >&2
    echo "  Install it from https://go.dev/dl/ (Debian/Ubuntu's golang package is usually older)," >&2
    echo "  then make sure 'go' is on your PATH." >&2
    exit 1
  fi
  local have
  have=$(go env GOVERSION | sed 's/^go//')
  if [ "$(printf '%s\n%s\n' "$GO_MIN" "$have" | sort -V | head -n1)" != "$GO_MIN" ]; then
    # go.mod's toolchain line lets the go command fetch a newer toolchain
    # itself when GOTOOLCHAIN allows it; say so rather than fail silently.
    echo "churon: Go $have found; Go $GO_MIN or newer is needed (the go command may download it if GOTOOLCHAIN=auto)." >&2
  fi
}
