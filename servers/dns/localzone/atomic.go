package localzone

import (
	"context"
	"io/fs"
	"path/filepath"

	"github.com/bulwarkmcp/bulwark/kernel/atomicfile"
)

// lockFileName is the file every process using a data directory locks:
// exclusively for a mutation, shared for a read (kernel/atomicfile.Lock).
const lockFileName = ".lock"

// flock takes the data directory's lock, exclusive or shared, waiting until
// it is free or ctx ends; the Provider's mutex orders goroutines before they
// get here.
func flock(ctx context.Context, dir string, exclusive bool) (func(), error) {
	return atomicfile.Lock(ctx, filepath.Join(dir, lockFileName), exclusive)
}

// writeAtomic replaces dir/name with data through kernel/atomicfile (old or
// new for every reader and after a crash; nanosecond mtimes, so the parse
// cache keyed by stat(2) sees two quick rewrites).
func writeAtomic(dir, name string, data []byte, perm fs.FileMode, noSync bool) error {
	return atomicfile.Write(filepath.Join(dir, name), data, perm, &atomicfile.Options{NoSync: noSync})
}

// removeDurably deletes dir/name (absent is fine) and syncs the directory.
func removeDurably(dir, name string, noSync bool) error {
	return atomicfile.Remove(filepath.Join(dir, name), &atomicfile.Options{NoSync: noSync})
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
