package quant

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"testing"
)

// TestNoFusedMultiplyAdd compiles this package for architectures where Go
// may fuse x*y+z into one instruction and checks that it never does:
// ggml's reference code rounds every product, and the bit-exact paths
// depend on doing the same (see dequant.go). Needs the go command.
func TestNoFusedMultiplyAdd(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles the package for other architectures")
	}
	goCmd := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := exec.LookPath(goCmd); err != nil {
		t.Skipf("go command not found: %v", err)
	}
	// arm64 FMADDS/FMSUBD/FNMADDS…, riscv64 FMADDS/FNMSUBD…, and vector forms.
	fused := regexp.MustCompile(`(?m)^.*\bV?FN?M(ADD|SUB)\w*\b.*$`)
	for _, arch := range []string{"arm64", "riscv64"} {
		cmd := exec.Command(goCmd, "build", "-gcflags=-S", "-o", "/dev/null", ".")
		cmd.Env = append(cmd.Environ(), "GOARCH="+arch, "GOOS=linux", "CGO_ENABLED=0")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s build: %v\n%s", arch, err, out)
		}
		for _, line := range fused.FindAll(out, 5) {
			t.Errorf("%s: fused multiply-add: %s", arch, line)
		}
	}
}
