// Package fontcheck tells whether the fonts installed on this system can
// show Hangul.
//
// Fyne's bundled font has no Hangul; when a character is missing Fyne falls
// back to a system font that has it, found with go-text's fontscan. With no
// such font Korean text draws as empty boxes. Hangul scans the same index
// Fyne uses (so the answer matches what Fyne will draw) and the app shows a
// notice asking the person to install fonts-noto-cjk or fonts-nanum.
//
// The package does not import Fyne: it can be checked anywhere.
package fontcheck
