//go:build unix

package engine

import (
	"fmt"
	"syscall"

	"github.com/churon/churon/engine/gguf"
)

// lockWeights pins every tensor's bytes in RAM. On failure nothing stays
// locked.
func lockWeights(f *gguf.File) error {
	for i := range f.Tensors {
		data, err := f.TensorData(&f.Tensors[i])
		if err != nil || len(data) == 0 {
			continue
		}
		if err := syscall.Mlock(data); err != nil {
			unlockWeights(f)
			return fmt.Errorf("lock weights in memory (mlock; raise the limit with ulimit -l): %w", err)
		}
	}
	return nil
}

func unlockWeights(f *gguf.File) {
	for i := range f.Tensors {
		if data, err := f.TensorData(&f.Tensors[i]); err == nil && len(data) > 0 {
			_ = syscall.Munlock(data)
		}
	}
}
