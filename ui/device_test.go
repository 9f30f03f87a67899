package ui

import (
	"errors"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/churon/churon/app/api/session"
	"github.com/churon/churon/internal/uitest"
	"github.com/churon/churon/ui/locale"
)

// visibleLabel finds a shown label holding s under o.
func visibleLabel(o fyne.CanvasObject, s string) bool {
	switch o := o.(type) {
	case *widget.Label:
		return o.Visible() && strings.Contains(o.Text, s)
	case *fyne.Container:
		if !o.Visible() {
			return false
		}
		for _, c := range o.Objects {
			if visibleLabel(c, s) {
				return true
			}
		}
	}
	return false
}

// TestDeviceFallbackNotice: when the GPU fails during an answer, the
// window says what happened and what to do in the person's language,
// with the technical reason behind Details.
func TestDeviceFallbackNotice(t *testing.T) {
	for _, tc := range []struct{ lang, says, details string }{
		{"en", "The GPU stopped working during an answer", "Details"},
		{"ko", "답변 도중 GPU가 멈췄습니다", "자세히"},
	} {
		t.Run(tc.lang, func(t *testing.T) {
			h := newHarness(t, harnessOptions{})
			if _, err := locale.Set(tc.lang); err != nil {
				t.Fatal(err)
			}
			defer locale.Set("en")
			reason := errors.New("NVIDIA H200 failed: CUDA_ERROR_ILLEGAL_ADDRESS; the model runs on the CPU now")
			h.u.apply(session.DeviceFallback{Path: "/m.gguf", Err: reason})
			if !visibleLabel(h.u.w.Notice, tc.says) {
				t.Fatalf("the notice does not say %q:\n%s", tc.says, uitest.Text(h.u.w.Notice))
			}
			if visibleLabel(h.u.w.Notice, "CUDA_ERROR_ILLEGAL_ADDRESS") {
				t.Fatal("the technical reason shows before Details is tapped")
			}
			test.Tap(uitest.FindButton(t, h.u.w.Notice, tc.details))
			if !visibleLabel(h.u.w.Notice, "CUDA_ERROR_ILLEGAL_ADDRESS") {
				t.Fatal("Details does not show the reason")
			}
			if tc.lang == "en" {
				// The test driver lays out again only when the window changes.
				h.W.Resize(fyne.NewSize(1100, 761))
				h.W.Resize(fyne.NewSize(1100, 760))
				uitest.SaveScreenshot(t, "gpu-fallback.png", h.W.Canvas().Capture())
			}
		})
	}
}
