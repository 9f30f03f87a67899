package models_test

// The tests of package models open the whole window (package ui, which
// imports this package) through uitest.NewWindow; this file, outside the
// package, brings package ui in.
import _ "github.com/churon/churon/internal/uitest/uiwin"
