//go:build !unix

package engine

import (
	"errors"

	"github.com/churon/churon/engine/gguf"
)

func lockWeights(*gguf.File) error {
	return errors.New("locking weights in memory is not supported on this system")
}

func unlockWeights(*gguf.File) {}
