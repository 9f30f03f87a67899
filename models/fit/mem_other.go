//go:build !linux

package fit

import "errors"

// SystemMemory is not implemented on this OS yet: verdicts are Unknown.
func SystemMemory() (Memory, error) {
	return Memory{}, errors.New("fit: the machine's memory is not known on this system")
}
