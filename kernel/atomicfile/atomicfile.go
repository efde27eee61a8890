// Package atomicfile is the one place bulwark replaces a file on disk and
// locks one across processes: the local zone store, the gateway's pin file
// and the VDB key file all write through it.
//
// Write gives every reader, and every state after a crash, either the old
// file or the new one: a temporary file in the same directory is created
// with mode 0600 (so a secret is never readable by others, not even for an
// instant), given its final mode, written, stamped, synced and renamed over
// the target, and then the directory is synced so the rename is durable.
package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// Options tune Write and Remove; the zero value is the durable default.
type Options struct {
	// NoSync skips the file and directory syncs: readers and a killed
	// process still see old or new, but a machine crash may lose the write.
	NoSync bool
}

// Write replaces path with data, which gets mode perm.
//
// The new file's modification time is set from the nanosecond clock: the
// kernel stamps files with a coarse clock and reuses freed inode numbers,
// so two quick rewrites could otherwise look identical to a cache keyed by
// stat(2).
func Write(path string, data []byte, perm fs.FileMode, opts *Options) (err error) {
	dir, name := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, ".tmp-"+name+"-*")
	if err != nil {
		return fmt.Errorf("creating temporary file for %s: %w", name, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			_ = f.Close()
			_ = os.Remove(tmp)
		}
	}()
	if err = f.Chmod(perm); err != nil {
		return fmt.Errorf("setting mode of %s: %w", name, err)
	}
	if _, err = f.Write(data); err != nil {
		return fmt.Errorf("writing %s: %w", name, err)
	}
	now := time.Now()
	if err = os.Chtimes(tmp, now, now); err != nil {
		return fmt.Errorf("stamping %s: %w", name, err)
	}
	noSync := opts != nil && opts.NoSync
	if !noSync {
		if err = f.Sync(); err != nil {
			return fmt.Errorf("syncing %s: %w", name, err)
		}
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("closing %s: %w", name, err)
	}
	if err = os.Rename(tmp, path); err != nil {
		return fmt.Errorf("renaming %s into place: %w", name, err)
	}
	if noSync {
		return nil
	}
	if err = syncDir(dir); err != nil {
		return fmt.Errorf("syncing directory after writing %s: %w", name, err)
	}
	return nil
}

// Remove deletes path (absent is fine) and syncs its directory.
func Remove(path string, opts *Options) error {
	name := filepath.Base(path)
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("removing %s: %w", name, err)
	}
	if opts != nil && opts.NoSync {
		return nil
	}
	if err := syncDir(filepath.Dir(path)); err != nil {
		return fmt.Errorf("syncing directory after removing %s: %w", name, err)
	}
	return nil
}

// DataDir is where bulwark keeps its files of one kind (name: "zones",
// "gateway", …) unless configured otherwise: $XDG_DATA_HOME/bulwark/name
// when XDG_DATA_HOME is absolute, else $HOME/.local/share/bulwark/name; ""
// when neither is set. getenv reads the environment (os.Getenv, or a
// test's map).
func DataDir(getenv func(string) string, name string) string {
	if d := getenv("XDG_DATA_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "bulwark", name)
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".local", "share", "bulwark", name)
	}
	return ""
}
