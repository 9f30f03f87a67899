// Package atomicfile writes files so that a crash, a full disk or an
// error half-way never leaves a half-written file under the final name,
// nor clobbers the previous version: the content goes to a temporary file
// in the same directory, which is synced and renamed over the target, and
// the directory is synced so the rename itself survives a power cut.
//
// GGUF files, quantized models, chat exports and download state are all
// written this way; one copy of the dance keeps them all equally careful.
package atomicfile

import (
	"bufio"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Write creates or replaces path with what fill writes (buffered), with
// the given permissions. On any error path is untouched and the
// temporary file removed; the error is fill's own or says which step
// failed.
func Write(path string, perm fs.FileMode, fill func(io.Writer) error) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	tmp, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	bw := bufio.NewWriterSize(tmp, 1<<20)
	if err = fill(bw); err != nil {
		return err
	}
	if err = bw.Flush(); err != nil {
		return fmt.Errorf("write %s: %w", tmp.Name(), err)
	}
	// CreateTemp makes the file 0600.
	if err = tmp.Chmod(perm); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", tmp.Name(), err)
	}
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("close %s: %w", tmp.Name(), err)
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	SyncDir(dir)
	return nil
}

// WriteFile is Write for content already in memory, with os.WriteFile's
// arguments.
func WriteFile(path string, data []byte, perm fs.FileMode) error {
	return Write(path, perm, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// SyncDir makes renames in dir durable, where the operating system can
// sync a directory (best effort: Windows cannot, and needs not).
func SyncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}
