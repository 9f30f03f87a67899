package assets

import (
	"bytes"
	"encoding/xml"
	"image"
	"image/png"
	"os"
	"testing"
)

func TestIconPNG(t *testing.T) {
	img, err := png.Decode(bytes.NewReader(IconPNG))
	if err != nil {
		t.Fatalf("icon-256.png: %v", err)
	}
	if got := img.Bounds(); got != image.Rect(0, 0, 256, 256) {
		t.Fatalf("icon-256.png is %v, want 256×256", got)
	}
	// The speech bubble's rounded corner leaves the image corner clear and
	// the bubble's middle opaque: a square or blank rendering fails here.
	if _, _, _, a := img.At(0, 0).RGBA(); a != 0 {
		t.Errorf("corner pixel alpha %d, want transparent", a)
	}
	if _, _, _, a := img.At(128, 128).RGBA(); a != 0xffff {
		t.Errorf("centre pixel alpha %d, want opaque", a)
	}
}

// The SVGs' view boxes are part of the contract with packaging/icons.sh:
// it picks icon-small.svg up to 32 px and insets icon.svg for macOS by
// rewriting viewBox="0 0 512 512".
func TestIconSVGs(t *testing.T) {
	for _, tc := range []struct{ file, viewBox string }{
		{"icon.svg", "0 0 512 512"},
		{"icon-small.svg", "0 0 16 16"},
	} {
		data, err := os.ReadFile(tc.file)
		if err != nil {
			t.Fatal(err)
		}
		var root struct {
			XMLName xml.Name
			ViewBox string `xml:"viewBox,attr"`
		}
		if err := xml.Unmarshal(data, &root); err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		if root.XMLName.Local != "svg" || root.ViewBox != tc.viewBox {
			t.Errorf("%s: <%s viewBox=%q>, want <svg viewBox=%q>", tc.file, root.XMLName.Local, root.ViewBox, tc.viewBox)
		}
	}
}
