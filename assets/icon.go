// Package assets holds artwork shipped inside the churon binary: the icon
// and the Hangul fonts (fonts.go).
//
// The icon is drawn in icon.svg (icon-small.svg is the same mark redrawn
// on a 16-pixel grid so that it stays crisp at 16–32 px). packaging/icons.sh
// renders both to every size the platforms need; only icon-256.png, the
// window and taskbar icon, is committed and embedded here. Run
// `make icons` after changing either SVG.
package assets

import _ "embed"

// IconPNG is the 256×256 app icon that the desktop app gives its windows.
//
//go:embed icon-256.png
var IconPNG []byte
