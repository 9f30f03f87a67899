// Package storetest gives tests of the packages above app/store a
// conversation store of their own, in a temporary folder.
package storetest

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/churon/churon/app/store"
)

// Temp opens a fresh store in a temporary folder of t's; it is closed
// when t and its subtests end (after the cleanups registered later, such
// as a session manager's, have run).
func Temp(t testing.TB) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "churon.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}
