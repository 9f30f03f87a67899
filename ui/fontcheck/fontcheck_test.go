package fontcheck

import (
	"os/exec"
	"reflect"
	"strings"
	"testing"

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
