//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package kvcache

import (
	"errors"
	"os"
	"syscall"
)

// A writer holds an exclusive flock on its temporary file until the file
// has its final name, so Open can tell a live writer's file (locked) from
// one a killed process left behind (the kernel dropped its lock).
const canLock = true

// renameOpen: the temporary file is renamed while still open (and
// locked), which unix allows.
const renameOpen = true

func lockFile(f *os.File) error {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
}

// inUse reports whether another open file description holds a lock on
// the file at path.
func inUse(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if err == nil {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		return false
	}
	return errors.Is(err, syscall.EWOULDBLOCK)
}

// lockWait takes an exclusive flock on f, waiting for another writer's
// append to end. Closing f releases it.
func lockWait(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}
