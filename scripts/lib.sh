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

# quietly runs a command with its output held back, and shows that output
# only if the command fails: apt's progress chatter is noise when it
# works and the reason when it does not.
quietly() {
  local log rc=0
  log=$(mktemp)
  "$@" >"$log" 2>&1 || rc=$?
  if [ "$rc" != 0 ]; then
    echo "churon: '$*' failed (exit $rc):" >&2
    cat "$log" >&2
  fi
  rm -f "$log"
  return "$rc"
}

# Debian/Ubuntu packages the desktop app needs to build (cgo + GLFW, see
# docs/ARCHITECTURE.md and Fyne's requirements); FONT_PKGS are optional and
# make Chinese and Japanese text readable (Korean is drawn from the fonts
# in assets/fonts).
GUI_PKGS="gcc libc6-dev pkg-config libgl-dev libx11-dev libxcursor-dev libxrandr-dev libxinerama-dev libxi-dev libxxf86vm-dev"
FONT_PKGS="fonts-noto-cjk"

# require_gui_deps makes sure the C toolchain and the X11/OpenGL headers
# that Fyne's GLFW driver compiles against are installed. On Debian and
# Ubuntu it installs them when it can (as root, or with sudo that needs no
# password); otherwise it prints the exact command and stops.
require_gui_deps() {
  case "$(uname -s)" in
    Linux|*BSD) ;;
    Darwin)
      if ! xcode-select -p >/dev/null 2>&1; then
        echo "churon: the desktop app needs Xcode's command line tools: run 'xcode-select --install'." >&2
        exit 1
      fi
      return ;;
    *) return ;; # Windows: Fyne needs a gcc (e.g. MSYS2 mingw-w64) on PATH
  esac
  if command -v gcc >/dev/null 2>&1 && command -v pkg-config >/dev/null 2>&1 &&
     pkg-config --exists gl x11 xcursor xrandr xinerama xi xxf86vm 2>/dev/null; then
    return
  fi
  if command -v apt-get >/dev/null 2>&1; then
    local cmd="apt-get install -y -qq $GUI_PKGS"
    if [ "$(id -u)" = 0 ]; then
      echo "==> installing the desktop app's build packages (a minute or two): $GUI_PKGS" >&2
      quietly apt-get update -qq && quietly env DEBIAN_FRONTEND=noninteractive $cmd
      return
    fi
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
      echo "==> installing the desktop app's build packages (a minute or two): $GUI_PKGS" >&2
      quietly sudo apt-get update -qq && quietly sudo DEBIAN_FRONTEND=noninteractive $cmd
      return
    fi
    echo "churon: building the desktop app needs C and X11/OpenGL headers. Install them with:" >&2
    echo "  sudo apt-get install $GUI_PKGS" >&2
    echo "(and, to read Chinese or Japanese: sudo apt-get install $FONT_PKGS)" >&2
    exit 1
  fi
  if command -v dnf >/dev/null 2>&1; then
    echo "churon: building the desktop app needs C and X11/OpenGL headers. Install them with:" >&2
    echo "  sudo dnf install gcc pkgconf-pkg-config mesa-libGL-devel libX11-devel libXcursor-devel libXrandr-devel libXinerama-devel libXi-devel libXxf86vm-devel" >&2
    exit 1
  fi
  echo "churon: building the desktop app needs gcc, pkg-config and the development files of OpenGL, X11, Xcursor, Xrandr, Xinerama, Xi and Xxf86vm; install them with your package manager." >&2
  exit 1
}

# ensure_cxx makes a C++ compiler available: the CUDA and Metal backends'
# tests compile our kernels' sources for the CPU (the emulated GPUs) and skip,
# saying the kernels went unchecked, without one. It installs Debian's g++
# when it can and returns 1 when neither g++ nor clang++ is there.
ensure_cxx() {
  command -v g++ >/dev/null 2>&1 || command -v clang++ >/dev/null 2>&1 && return 0
  command -v apt-get >/dev/null 2>&1 || return 1
  echo "==> installing g++ (the GPU backends' kernels are checked on the CPU)" >&2
  apt_install g++ && command -v g++ >/dev/null 2>&1
}

# apt_install installs Debian packages without asking, as root or with
# sudo that needs no password; it returns 1 when it cannot.
apt_install() {
  if [ "$(id -u)" = 0 ]; then
    quietly apt-get update -qq && quietly env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@"
  elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    quietly sudo apt-get update -qq && quietly sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@"
  else
    return 1
  fi
}

# ensure_qemu_aarch64 makes qemu-aarch64 available to run the arm64 tests
# on an x86 host: it installs Debian's qemu-user when it can (root, or
# password-free sudo) and returns 1 when qemu-aarch64 is still missing.
ensure_qemu_aarch64() {
  command -v qemu-aarch64 >/dev/null 2>&1 && return 0
  command -v apt-get >/dev/null 2>&1 || return 1
  echo "==> installing qemu-user (runs the arm64 tests on this $(uname -m) host)" >&2
  apt_install qemu-user && command -v qemu-aarch64 >/dev/null 2>&1
}
