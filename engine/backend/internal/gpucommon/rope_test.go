package gpucommon

import (
	"slices"
	"testing"

	"github.com/churon/churon/engine/backend"
	"github.com/churon/churon/engine/backend/cpu"
)

// TestRopeTable: a table is kept once placed, for the same positions and
// parameters only, and not after Forget or before Keep.
func TestRopeTable(t *testing.T) {
	r := backend.Rope{Mode: backend.RopeNeoX, Dims: 8, FreqBase: 10000, FreqScale: 1, AttnFactor: 1}
	pos := []int32{3, 4, 5}
	var tab RopeTable[int]
	if _, ok := tab.Kept(pos, &r); ok {
		t.Fatal("a table kept before any was made")
	}
	host := tab.Make(pos, &r)
	if want := cpu.RopeTable(nil, pos, &r); !slices.Equal(host, want) {
		t.Fatalf("Make = %v, want the CPU's %v", host, want)
	}
	if _, ok := tab.Kept(pos, &r); ok {
		t.Fatal("a table kept before Keep")
	}
	tab.Keep(7)
	pos[0] = 2 // the table holds its own copy of the positions
	if at, ok := tab.Kept([]int32{3, 4, 5}, &r); !ok || at != 7 {
		t.Fatalf("Kept = %d, %v; want 7, true", at, ok)
	}
	r2 := r
	r2.FreqBase = 500000
	if _, ok := tab.Kept([]int32{3, 4, 5}, &r2); ok {
		t.Error("the table kept for other parameters")
	}
	if _, ok := tab.Kept([]int32{3, 4, 6}, &r); ok {
		t.Error("the table kept for other positions")
	}
	tab.Forget()
	if _, ok := tab.Kept([]int32{3, 4, 5}, &r); ok {
		t.Error("the table kept after Forget")
	}
}
