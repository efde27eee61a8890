package localzone

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// writeAtomic replaces dir/name with data so that every reader, and every
// state after a crash, sees either the old file or the new one: a temporary
// file in the same directory is written, synced and renamed over the target,
// then the directory is synced so the rename itself is durable.
//
// The new file's modification time is set from the nanosecond clock. The
// kernel stamps files with a coarse clock and reuses freed inode numbers, so
// two quick rewrites could otherwise look identical to a stat-keyed cache.
//
// With noSync the file and directory syncs are skipped: readers and a killed
// process still see old or new, but a machine crash may lose the write.
func writeAtomic(dir, name string, data []byte, perm fs.FileMode, noSync bool) (err error) {
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
	if _, err = f.Write(data); err != nil {
		return fmt.Errorf("writing %s: %w", name, err)
	}
	if err = f.Chmod(perm); err != nil {
		return fmt.Errorf("setting mode of %s: %w", name, err)
	}
	now := time.Now()
	if err = os.Chtimes(tmp, now, now); err != nil {
		return fmt.Errorf("stamping %s: %w", name, err)
	}
	if !noSync {
		if err = f.Sync(); err != nil {
			return fmt.Errorf("syncing %s: %w", name, err)
		}
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("closing %s: %w", name, err)
	}
	if err = os.Rename(tmp, filepath.Join(dir, name)); err != nil {
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

// removeDurably deletes dir/name (absent is fine) and syncs the directory.
func removeDurably(dir, name string, noSync bool) error {
	if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("removing %s: %w", name, err)
	}
	if noSync {
		return nil
	}
	if err := syncDir(dir); err != nil {
		return fmt.Errorf("syncing directory after removing %s: %w", name, err)
	}
	return nil
}

// statKey identifies one version of a file well enough to cache what was
// parsed from it: a rename gives a new inode, an edit in place a new size or
// time, and writeAtomic stamps nanosecond times.
type statKey struct {
	dev, ino uint64
	size     int64
	mtime    int64
	ctime    int64
}

// keyOf returns the statKey of fi.
func keyOf(fi fs.FileInfo) statKey {
	k := statKey{size: fi.Size(), mtime: fi.ModTime().UnixNano()}
	k.dev, k.ino, k.ctime = sysKey(fi)
	return k
}
