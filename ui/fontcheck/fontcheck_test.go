package fontcheck

import (
	"bytes"
	"encoding/binary"
	"os"
	"os/exec"
	"reflect"
	"slices"
	"strings"
	"testing"

	"fyne.io/fyne/v2/theme"
	"github.com/go-text/typesetting/font"
	"github.com/go-text/typesetting/fontscan"
)

func footprint(file, text string) fontscan.Footprint {
	fp := fontscan.Footprint{}
	fp.Location.File = file
	for _, r := range text {
		fp.Runes.Add(r)
	}
	return fp
}

func TestCovers(t *testing.T) {
	latin := footprint("latin.ttf", "abcdefghijklmnopqrstuvwxyz")
	partial := footprint("partial.ttf", "한국어대화새모델")
	full := footprint("full.ttf", "한국어대화새모델똠뷁")
	cases := []struct {
		name string
		fps  []fontscan.Footprint
		want Result
	}{
		{"no fonts", nil, Result{Missing: []rune("한국어대화새모델똠뷁")}},
		{"latin only", []fontscan.Footprint{latin}, Result{Missing: []rune("한국어대화새모델똠뷁")}},
		{"partial font", []fontscan.Footprint{latin, partial}, Result{Missing: []rune("똠뷁")}},
		{"full font", []fontscan.Footprint{latin, partial, full}, Result{Covered: true, Font: "full.ttf"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Covers(c.fps, Probe); !reflect.DeepEqual(got, c.want) {
				t.Errorf("got %+v, want %+v", got, c.want)
			}
		})
	}
}

// TestHangulAgreesWithFontconfig compares the scan with fontconfig's own
// answer where fc-list is installed.
func TestHangulAgreesWithFontconfig(t *testing.T) {
	fc, err := exec.LookPath("fc-list")
	if err != nil {
		t.Skip("fc-list not installed; nothing to compare with")
	}
	out, err := exec.Command(fc, ":charset=d55c d6c8", "file").Output()
	if err != nil {
		t.Skipf("fc-list failed: %v", err)
	}
	fcHas := strings.TrimSpace(string(out)) != ""
	res, err := Hangul()
	if err != nil {
		t.Fatal(err)
	}
	if res.Covered != fcHas {
		t.Errorf("Hangul() = %+v but fontconfig lists %q for Hangul", res, out)
	}
	t.Logf("Hangul font: %+v (fontconfig: %v)", res, fcHas)
}

// TestCoversBold: a covering font brings the bold face of its family
// along, else any bold upright face that covers the probe; an italic or a
// partial bold face is not taken.
func TestCoversBold(t *testing.T) {
	face := func(file, family string, weight font.Weight, style font.Style, text string) fontscan.Footprint {
		fp := footprint(file, text)
		fp.Family, fp.Aspect.Weight, fp.Aspect.Style = family, weight, style
		return fp
	}
	regular := face("cjk.ttc", "noto sans cjk", font.WeightNormal, font.StyleNormal, Probe)
	cases := []struct {
		name  string
		fps   []fontscan.Footprint
		want  string
		index uint16
	}{
		{"no bold", []fontscan.Footprint{regular}, "", 0},
		{"italic bold only", []fontscan.Footprint{regular, face("it.ttf", "noto sans cjk", font.WeightBold, font.StyleItalic, Probe)}, "", 0},
		{"partial bold", []fontscan.Footprint{regular, face("part.ttf", "noto sans cjk", font.WeightBold, font.StyleNormal, "한국어")}, "", 0},
		{"other family", []fontscan.Footprint{regular, face("nanum.ttf", "nanum gothic", font.WeightExtraBold, font.StyleNormal, Probe)}, "nanum.ttf", 0},
		{"own family first", []fontscan.Footprint{regular,
			face("nanum.ttf", "nanum gothic", font.WeightBold, font.StyleNormal, Probe),
			func() fontscan.Footprint {
				fp := face("cjk-bold.ttc", "noto sans cjk", font.WeightBold, font.StyleNormal, Probe)
				fp.Location.Index = 1
				return fp
			}()}, "cjk-bold.ttc", 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Covers(c.fps, Probe)
			if !got.Covered || got.Bold != c.want || got.BoldIndex != c.index {
				t.Errorf("got %+v, want bold %q index %d", got, c.want, c.index)
			}
		})
	}
}

// TestFromCollection packs Fyne's regular and bold fonts into a font
// collection the way a .ttc is laid out and cuts each back out: each
// reads as a font, the right one.
func TestFromCollection(t *testing.T) {
	fonts := [][]byte{theme.DefaultTextFont().Content(), theme.DefaultTextBoldFont().Content()}
	ttc := packCollection(t, fonts)
	for i, want := range []font.Weight{font.WeightNormal, font.WeightBold} {
		data, err := FromCollection(ttc, uint16(i))
		if err != nil {
			t.Fatal(err)
		}
		f, err := font.ParseTTF(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("font %d of the collection: %v", i, err)
		}
		if got := f.Describe().Aspect.Weight; got != want {
			t.Errorf("font %d: weight %v, want %v", i, got, want)
		}
		if _, ok := f.NominalGlyph('G'); !ok {
			t.Errorf("font %d has no glyph for G", i)
		}
	}
	if _, err := FromCollection(ttc, 2); err == nil {
		t.Error("font 2 of a collection of 2 was read")
	}
	if got, err := FromCollection(fonts[0], 0); err != nil || !bytes.Equal(got, fonts[0]) {
		t.Errorf("a single font came back changed (%v)", err)
	}
	// The system's Noto Sans CJK Bold, where it is installed: every font
	// of it reads and has Hangul.
	const cjk = "/usr/share/fonts/opentype/noto/NotoSansCJK-Bold.ttc"
	if _, err := os.Stat(cjk); err != nil {
		return
	}
	for i := uint16(0); ; i++ {
		data, err := Face(cjk, i)
		if err != nil {
			if i == 0 {
				t.Fatal(err)
			}
			break
		}
		f, err := font.ParseTTF(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("%s font %d: %v", cjk, i, err)
		}
		if _, ok := f.NominalGlyph('한'); !ok || f.Describe().Aspect.Weight < font.WeightBold {
			t.Errorf("%s font %d: Hangul %v, weight %v", cjk, i, ok, f.Describe().Aspect.Weight)
		}
	}
}

// packCollection lays fonts out as a TrueType collection: the header,
// then each font with its table offsets counted from the collection's
// start.
func packCollection(t *testing.T, fonts [][]byte) []byte {
	t.Helper()
	head := 12 + 4*len(fonts)
	out := make([]byte, head)
	copy(out, "ttcf")
	binary.BigEndian.PutUint32(out[4:], 0x00010000)
	binary.BigEndian.PutUint32(out[8:], uint32(len(fonts)))
	for i, f := range fonts {
		for len(out)%4 != 0 {
			out = append(out, 0)
		}
		base := len(out)
		binary.BigEndian.PutUint32(out[12+4*i:], uint32(base))
		g := slices.Clone(f)
		n := int(binary.BigEndian.Uint16(g[4:]))
		for j := 0; j < n; j++ {
			rec := g[12+16*j:]
			binary.BigEndian.PutUint32(rec[8:], binary.BigEndian.Uint32(rec[8:])+uint32(base))
		}
		out = append(out, g...)
	}
	return out
}
