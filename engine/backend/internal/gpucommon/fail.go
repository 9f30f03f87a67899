package gpucommon

import "errors"

// A GPU device reports failures as both backends do, at Sync: an
// operation's failure (a launch refused, staging or scratch not had) is
// kept until the next Sync, the first of them only, as the later ones
// most often follow from it; a failure that ends the device (a kernel
// fault, a failed command buffer) is returned by every Sync from then
// on, before any kept one. Each backend keeps its own kept failure and
// its own dead one (CUDA's is its context's, shared by the devices on
// it) and goes through these for what they mean.

// ErrClosed is the failure of a device used after Close (the error names
// the backend, prefix).
func ErrClosed(prefix string) error { return errors.New(prefix + ": device closed") }

// KeepFirst keeps err in *kept for the next Sync unless a failure is kept
// already.
func KeepFirst(kept *error, err error) {
	if *kept == nil {
		*kept = err
	}
}

// SyncErr is what Sync returns once it has waited: dead, the failure
// that ended the device, if there is one, else the failure kept since
// the last Sync; either way the kept one is cleared.
func SyncErr(kept *error, dead error) error {
	err := *kept
	*kept = nil
	if dead != nil {
		return dead
	}
	return err
}
