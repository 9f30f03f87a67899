//go:build !amd64 || noasm

package quant

// AMX reports whether the tile kernels are in use: never on this build.
func AMX() bool { return false }

func packedKernel(Type) bool { return false }

func vecDotPacked(Type, []byte, int, int, *PackedActs, []float32, int, *PackedScratch) {}
