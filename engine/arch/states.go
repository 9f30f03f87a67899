package arch

import "github.com/churon/churon/engine/gguf"

// stateReaders read, for the architectures with recurrent layers, each
// trunk layer's per-sequence state from the metadata alone.
var stateReaders = map[string]func(f *gguf.File) ([]int, error){}

// States is, per layer of a file's trunk, the bytes of recurrent state one
// sequence keeps in it (0: a layer with KV rows), as its architecture
// reads the metadata and as the model's CacheSpec allocates it — what the
// memory fit check asks of a header. It is nil for an architecture
// without recurrent layers.
func States(f *gguf.File) ([]int, error) {
	read, ok := stateReaders[f.Architecture()]
	if !ok {
		return nil, nil
	}
	return read(f)
}
