package arch

import (
	"fmt"

	"github.com/churon/churon/engine/gguf"
)

// windowReaders read, for the architectures with sliding-window layers,
// each layer's window from the metadata alone.
var windowReaders = map[string]func(l *loader, layers int) ([]int, error){}

// Windows is, per layer, the sliding window a file's layers attend over
// (0: every position), as its architecture reads the metadata — what the
// memory fit check asks of a header, whose layers with a window keep only
// a ring of KV rows. It is nil for an architecture without windows.
func Windows(f *gguf.File) ([]int, error) {
	read, ok := windowReaders[f.Architecture()]
	if !ok {
		return nil, nil
	}
	l := &loader{f: f, arch: f.Architecture()}
	layers := l.uint("block_count", -1)
	if l.err != nil {
		return nil, l.err
	}
	if layers > 1<<16 {
		return nil, fmt.Errorf("metadata %s.block_count: %d layers", l.arch, layers)
	}
	return read(l, layers)
}

// windowsOf turns a window and the layers it applies to into Windows'
// answer.
func windowsOf(window int, on []bool) []int {
	out := make([]int, len(on))
	for i, b := range on {
		if b {
			out[i] = window
		}
	}
	return out
}
