//go:build !amd64 || noasm

package quant

// Only amd64 has the Q4_0/Q8_0 prompt tiles (qtile_amd64.go).
func setPromptTiles(bool) (restore func()) { return func() {} }
