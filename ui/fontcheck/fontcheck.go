package fontcheck

import (
	"fmt"
	"io"
	"log"

	"github.com/go-text/typesetting/fontscan"
)

// Probe is the text a font must cover to count as Hangul-capable: common
// syllables from the app's own Korean strings, including ones outside the
// KS X 1001 set of 2,350 that some partial fonts carry.
const Probe = "한국어 대화 새 모델 똠 뷁"

// Result is the outcome of a check.
type Result struct {
	Covered bool
	// Font is a font file that covers Probe, when Covered.
	Font string
	// Missing lists the runes of Probe no single font covers, when not.
	Missing []rune
}

// Hangul checks the system's fonts. The first call scans the font folders
// (or reads fontscan's index, shared with Fyne, from the user cache
// folder) and can take a second; later calls in the same process reuse the
// scan, so fonts installed while the app runs are seen after a restart.
func Hangul() (Result, error) {
	fps, err := fontscan.SystemFonts(log.New(io.Discard, "", 0), "")
	if err != nil {
		return Result{}, fmt.Errorf("fontcheck: scan system fonts: %w", err)
	}
	return Covers(fps, Probe), nil
}

// Covers reports whether one of the fonts covers every letter of text
// (spaces and ASCII are not required: the bundled font has them). Fyne
// picks a fallback face per missing rune, but a single face for the whole
// script is what makes Korean text look even, so that is what counts.
func Covers(fps []fontscan.Footprint, text string) Result {
	var need []rune
	for _, r := range text {
		if r > 0x7f {
			need = append(need, r)
		}
	}
	bestMissing := need
	for i := range fps {
		var missing []rune
		for _, r := range need {
			if !fps[i].Runes.Contains(r) {
				missing = append(missing, r)
			}
		}
		if len(missing) == 0 {
			return Result{Covered: true, Font: fps[i].Location.File}
		}
		if len(missing) < len(bestMissing) {
			bestMissing = missing
		}
	}
	return Result{Missing: bestMissing}
}
