package nvrtc

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
)

// Sources are the kernel files, in the order their hash covers them:
// the translation unit first, then the headers it includes.
var Sources = []string{"kernels.cu", "common.cuh"}

// Options are NVRTC's options for the committed PTX. compute_61
// (Pascal) is the oldest architecture with dp4a, which every quantized
// matrix product uses.
var Options = []string{"--gpu-architecture=compute_61", "--std=c++14"}

// ISA is the PTX ISA version the committed PTX declares. NVRTC 11.8
// writes 7.8, which only drivers for CUDA 11.8 (R520, late 2022) and
// newer accept; the kernels use nothing newer than ISA 7.0, so the
// generator declares 7.0 (CUDA 11.0, drivers R450 and newer, mid 2020)
// and ptxas checks the result under that version (TestPTXAssembles).
const ISA = "7.0"

// SourceHash is the hash the PTX header records: of each source's name
// and contents, in Sources order.
func SourceHash(dir string) (string, error) {
	h := sha256.New()
	for _, name := range Sources {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s %d\n", name, len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// HeaderHash reads the source hash a PTX file's header records.
func HeaderHash(ptx []byte) string {
	m := regexp.MustCompile(`(?m)^// sources sha256 ([0-9a-f]{64})$`).FindSubmatch(ptx)
	if m == nil {
		return ""
	}
	return string(m[1])
}
