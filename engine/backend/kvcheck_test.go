package backend_test

import (
	"testing"

	"github.com/churon/churon/engine/backend"
	"github.com/churon/churon/engine/quant"
)

// TestCheckSetRows: whole rows at positions in the cache pass and say
// where they end; part of a row, or positions past the context, fail,
// the first naming the backend.
func TestCheckSetRows(t *testing.T) {
	s := backend.KVSpec{Context: 8, Dim: 4, Type: quant.F32} // rows of 16 bytes
	if p1, err := s.CheckSetRows("test", 2, make([]byte, 3*16)); err != nil || p1 != 5 {
		t.Errorf("3 rows at 2: %d, %v; want 5, nil", p1, err)
	}
	_, err := s.CheckSetRows("test", 0, make([]byte, 20))
	if want := "test: kv cache: 20 bytes are not whole rows of 16"; err == nil || err.Error() != want {
		t.Errorf("20 bytes: %v, want %q", err, want)
	}
	if _, err := s.CheckSetRows("test", 6, make([]byte, 3*16)); err == nil {
		t.Error("3 rows at 6 of 8: no error")
	}
}

// TestCheckStateSet: only a state's own size passes.
func TestCheckStateSet(t *testing.T) {
	if err := backend.CheckStateSet("test", make([]byte, 5), 5); err != nil {
		t.Error(err)
	}
	err := backend.CheckStateSet("test", make([]byte, 1), 5)
	if want := "test: state: 1 bytes for a state of 5"; err == nil || err.Error() != want {
		t.Errorf("1 byte for 5: %v, want %q", err, want)
	}
}
