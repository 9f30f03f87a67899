package gpucommon

import (
	"slices"

	"github.com/churon/churon/engine/backend"
	"github.com/churon/churon/engine/backend/cpu"
)

// RopeTable keeps the (cos, sin) table of the last positions a device
// rotated, made by the CPU's code (cpu.RopeTable), and where the device
// holds it (a CUDA address, a Metal binding): every layer of a pass
// rotates q and k at the same positions with the same parameters, so a
// pass makes and copies one table. A device asks Kept first; when that
// fails, it copies Make's values and hands their place to Keep.
type RopeTable[H any] struct {
	kept bool
	r    backend.Rope
	pos  []int32
	host []float32
	at   H
}

// Kept is where the table for pos and r is, when it is the one kept.
func (t *RopeTable[H]) Kept(pos []int32, r *backend.Rope) (H, bool) {
	if t.kept && cpu.SameRope(&t.r, r) && slices.Equal(t.pos, pos) {
		return t.at, true
	}
	var none H
	return none, false
}

// Make is the table for pos and r, for the device to copy (valid until
// the next Make); nothing is kept until Keep.
func (t *RopeTable[H]) Make(pos []int32, r *backend.Rope) []float32 {
	t.kept = false
	t.host = cpu.RopeTable(t.host, pos, r)
	t.r = *r
	t.pos = append(t.pos[:0], pos...)
	return t.host
}

// Keep records at as where the device copied the last Make's table.
func (t *RopeTable[H]) Keep(at H) { t.kept, t.at = true, at }

// Forget drops the table kept, for a device whose copy lasts only until
// its next wait (Metal's staging).
func (t *RopeTable[H]) Forget() { t.kept = false }
