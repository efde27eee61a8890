//go:build !unix

package atomicfile

import "context"

// Lock is a no-op where flock(2) does not exist: there, only a caller's own
// mutex orders its goroutines, so one process at a time may use the file.
func Lock(ctx context.Context, path string, exclusive bool) (func(), error) {
	return func() {}, ctx.Err()
}

// syncDir is a no-op where directories cannot be opened for syncing.
func syncDir(string) error { return nil }
