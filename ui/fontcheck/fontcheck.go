package fontcheck

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log"
	"os"

	"github.com/go-text/typesetting/font"
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
	// Bold is a bold, upright font that covers Probe too, if there is one
	// (BoldIndex: its place in a font collection, .ttc). Fyne falls back
	// to a regular face for every rune its own bold font lacks, so Hangul
	// in bold text is drawn regular unless the theme is given this face.
	Bold      string
	BoldIndex uint16
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
			res := Result{Covered: true, Font: fps[i].Location.File}
			if b, ok := bold(fps, need, fps[i].Family); ok {
				res.Bold, res.BoldIndex = b.Location.File, b.Location.Index
			}
			return res
		}
		if len(missing) < len(bestMissing) {
			bestMissing = missing
		}
	}
	return Result{Missing: bestMissing}
}

// bold finds an upright bold font that covers need, of family if one is.
func bold(fps []fontscan.Footprint, need []rune, family string) (fontscan.Footprint, bool) {
	var found fontscan.Footprint
	ok := false
	for _, fp := range fps {
		if fp.Aspect.Weight < font.WeightBold || fp.Aspect.Style != font.StyleNormal {
			continue
		}
		covers := true
		for _, r := range need {
			if !fp.Runes.Contains(r) {
				covers = false
				break
			}
		}
		if !covers {
			continue
		}
		if fp.Family == family {
			return fp, true
		}
		if !ok {
			found, ok = fp, true
		}
	}
	return found, ok
}

// Face reads one font from a font file, as a file of its own: a font
// collection (.ttc, as Noto Sans CJK ships) is cut down to font index,
// since Fyne's font loader reads single fonts only.
func Face(file string, index uint16) ([]byte, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("fontcheck: %w", err)
	}
	face, err := FromCollection(data, index)
	if err != nil {
		return nil, fmt.Errorf("fontcheck: %s: %w", file, err)
	}
	return face, nil
}

// FromCollection is font index of a font collection, as a font file of
// its own; data that is a single font already is returned as it is. A
// collection's table offsets count from the start of the file, so the
// font's table directory is put in front of the whole collection with
// every offset moved by its length: the tables are not copied.
func FromCollection(data []byte, index uint16) ([]byte, error) {
	if len(data) < 12 || string(data[:4]) != "ttcf" {
		return data, nil
	}
	n := binary.BigEndian.Uint32(data[8:12])
	if uint32(index) >= n || len(data) < 12+4*int(n) {
		return nil, fmt.Errorf("no font %d in a collection of %d", index, n)
	}
	off := int(binary.BigEndian.Uint32(data[12+4*int(index):]))
	if off+12 > len(data) {
		return nil, errors.New("font collection cut short")
	}
	tables := int(binary.BigEndian.Uint16(data[off+4:]))
	dirLen := 12 + 16*tables
	if off+dirLen > len(data) {
		return nil, errors.New("font collection cut short")
	}
	out := make([]byte, dirLen, dirLen+len(data))
	copy(out, data[off:off+dirLen])
	for i := 0; i < tables; i++ {
		rec := out[12+16*i:]
		at := binary.BigEndian.Uint32(rec[8:12])
		binary.BigEndian.PutUint32(rec[8:12], at+uint32(dirLen))
	}
	return append(out, data...), nil
}
