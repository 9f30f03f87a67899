package engine

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/churon/churon/models/synth"
)

// TestIdentity: the same file gives the same identity however it is
// loaded; other weights, or one changed byte in a sampled chunk, give
// another.
func TestIdentity(t *testing.T) {
	spec := synth.Tiny("llama")
	pa := synthFile(t, "a.gguf", spec)
	a := loadModel(t, pa)
	id := a.Identity()
	st, _ := os.Stat(pa)
	if id.FileSize != st.Size() || id.Architecture != "llama" || id.Format != SnapshotFormat || id.Hash == [32]byte{} {
		t.Fatalf("identity %v", id)
	}
	mem, err := Load(context.Background(), pa, LoadOptions{Threads: 1, InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	if mem.Identity() != id {
		t.Errorf("in memory %v, mapped %v", mem.Identity(), id)
	}

	spec.Seed = 9
	pb := synthFile(t, "b.gguf", spec)
	if b := loadModel(t, pb); b.Identity().Hash == id.Hash {
		t.Error("other weights, same hash")
	}
	// One flipped byte in the last tensor (inside the last MiB sampled).
	raw, _ := os.ReadFile(pa)
	raw[len(raw)-3] ^= 0x40
	pc := filepath.Join(t.TempDir(), "c.gguf")
	if err := os.WriteFile(pc, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if c := loadModel(t, pc); c.Identity().Hash == id.Hash {
		t.Error("a changed weight, same hash")
	}
	s, _ := a.NewSequence(SequenceOptions{Context: 48, KVType: KVQ8_0})
	if sid := s.Identity(); sid.Context != 48 || sid.KVType != KVQ8_0 || sid.Hash != id.Hash {
		t.Errorf("sequence identity %v", sid)
	}
}
