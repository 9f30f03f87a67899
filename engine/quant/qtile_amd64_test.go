//go:build amd64 && !noasm

package quant

// setPromptTiles turns the Q4_0/Q8_0 prompt tiles on or off for a test
// and returns a function that restores the setting.
func setPromptTiles(on bool) (restore func()) {
	old := qTileOn
	qTileOn = on
	return func() { qTileOn = old }
}
