package uitest

import (
	"reflect"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"
)

// Children are the objects o shows: a container's, or a widget's
// renderer's.
func Children(o fyne.CanvasObject) []fyne.CanvasObject {
	switch o := o.(type) {
	case *fyne.Container:
		return o.Objects
	case fyne.Widget:
		return test.WidgetRenderer(o).Objects()
	}
	return nil
}

// Walk calls visit on o and, where visit returns true, on what o shows,
// depth first.
func Walk(o fyne.CanvasObject, visit func(fyne.CanvasObject) bool) {
	if !visit(o) {
		return
	}
	for _, c := range Children(o) {
		Walk(c, visit)
	}
}

// Text collects the text of every label, rich text and button under o.
func Text(o fyne.CanvasObject) string {
	var b strings.Builder
	Walk(o, func(o fyne.CanvasObject) bool {
		switch o := o.(type) {
		case *widget.Label:
			b.WriteString(o.Text + "\n")
		case *widget.RichText:
			b.WriteString(o.String() + "\n")
		case *widget.Button:
			b.WriteString("[" + o.Text + "]\n")
		default:
			return true
		}
		return false
	})
	return b.String()
}

// Find finds the first object of type T under o (o included) that ok
// accepts (nil: any).
func Find[T any](o fyne.CanvasObject, ok func(T) bool) (T, bool) {
	var found T
	done := false
	Walk(o, func(o fyne.CanvasObject) bool {
		if done {
			return false
		}
		if v, is := o.(T); is && (ok == nil || ok(v)) {
			found, done = v, true
			return false
		}
		return true
	})
	return found, done
}

// FindButton finds the button labelled label under o, or fails the test.
func FindButton(t *testing.T, o fyne.CanvasObject, label string) *widget.Button {
	t.Helper()
	var found *widget.Button
	Walk(o, func(o fyne.CanvasObject) bool {
		b, ok := o.(*widget.Button)
		if found == nil && ok && b.Text == label {
			found = b
		}
		return found == nil && !ok
	})
	if found == nil {
		t.Fatalf("no %q button in %s", label, Text(o))
	}
	return found
}

// OverlayFind finds the first object of type T in the window's overlays
// (dialogs, pop-up menus), newest first.
func OverlayFind[T any](w fyne.Window) (T, bool) {
	list := w.Canvas().Overlays().List()
	for i := len(list) - 1; i >= 0; i-- {
		if v, ok := Find[T](list[i], nil); ok {
			return v, true
		}
	}
	var zero T
	return zero, false
}

// OverlayButton finds a button in the dialog shown on top of the window.
func OverlayButton(t *testing.T, w fyne.Window, label string) *widget.Button {
	t.Helper()
	top := w.Canvas().Overlays().Top()
	if top == nil {
		t.Fatalf("no dialog is shown (looking for %q)", label)
	}
	return FindButton(t, top, label)
}

// MenuItems returns the items of the pop-up menu on top, by label, and
// closes the menu.
func MenuItems(t *testing.T, w fyne.Window) map[string]*fyne.MenuItem {
	t.Helper()
	m, ok := OverlayFind[*widget.PopUpMenu](w)
	if !ok {
		t.Fatal("no pop-up menu is open")
	}
	items := map[string]*fyne.MenuItem{}
	for _, o := range m.Items {
		// Menu rows are an unexported type; their Item field is exported.
		v := reflect.ValueOf(o)
		if v.Kind() == reflect.Pointer && v.Elem().Kind() == reflect.Struct {
			if f := v.Elem().FieldByName("Item"); f.IsValid() {
				if mi, ok := f.Interface().(*fyne.MenuItem); ok && mi != nil {
					items[mi.Label] = mi
				}
			}
		}
	}
	m.Hide()
	w.Canvas().Overlays().Remove(m)
	return items
}

// Shown reports whether the window shows obj: it is in the window's
// content, and it and everything around it are visible.
func Shown(w fyne.Window, obj fyne.CanvasObject) bool {
	found := false
	Walk(w.Content(), func(o fyne.CanvasObject) bool {
		found = found || o == obj
		return !found && o.Visible()
	})
	return found && obj.Visible()
}

// Settle lays the whole window out again, top down, as the real driver
// does before each frame (the test canvas does not): needed after rows
// were added, before reading sizes or taking a picture.
func Settle(w fyne.Window) {
	for range 3 {
		Layout(w.Content())
	}
}

// Layout lays o out once, top down, as the driver does before a frame:
// each visible container by its layout, each visible widget by its
// renderer, down to every object shown.
func Layout(o fyne.CanvasObject) {
	if !o.Visible() {
		return
	}
	switch o := o.(type) {
	case *fyne.Container:
		if o.Layout != nil {
			o.Layout.Layout(o.Objects, o.Size())
		}
		for _, c := range o.Objects {
			Layout(c)
		}
	case fyne.Widget:
		r := test.WidgetRenderer(o)
		r.Layout(o.Size())
		for _, c := range r.Objects() {
			Layout(c)
		}
	}
}

// TapCheck taps a check box in its middle, where a person clicks.
func TapCheck(c *widget.Check) {
	test.TapAt(c, fyne.NewPos(8, c.Size().Height/2))
}
