//go:build amd64 && !noasm

package quant

// setPromptTiles turns the Q4_0/Q8_0 prompt tiles on or off for a test
// and returns a function that restores the setting.
func setPromptTiles(on bool) (restore func()) {
	old := qTileOn
	qTileOn = on
	return func() { qTileOn = old }
}

// promptTilesFor reports whether VecDotTile runs typ's nActs activation
// rows through the prompt tiles when the level has them.
func promptTilesFor(typ Type, nActs int) bool { return qTileOn && nActs >= qTileMinActs(typ) }

// promptTilesAVX2For reports whether the avx2 prompt tiles take nActs rows.
func promptTilesAVX2For(nActs int) bool { return qTileOn && nActs >= qTileAVX2MinActs }
