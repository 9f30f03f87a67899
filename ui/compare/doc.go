// Package compare is the Compare page of Churon's window: two to four
// models (typically one model in several quantizations) answer one
// prompt side by side, then a table of figures, the tokens where each
// parts from the reference marked, and a chart of the divergence
// (page.go, run.go, widgets.go); choosing the models, with copies made
// here or sibling quantizations downloaded (chooser.go, quant.go); past
// comparisons (history.go) and exports (export.go). The work is
// app/compare's.
//
// The shell (package ui) makes a Screen on a core.Window and the Models
// page's state, and shows its Page in the window's centre.
package compare
