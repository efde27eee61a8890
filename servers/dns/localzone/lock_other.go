//go:build !unix

package localzone

import "context"

// flock is a no-op where flock(2) does not exist: there, only the Provider's
// mutex serializes writers, so one process at a time may use a data directory.
func flock(ctx context.Context, dir string, exclusive bool) (func(), error) {
	return func() {}, ctx.Err()
}

// syncDir is a no-op where directories cannot be opened for syncing.
func syncDir(dir string) error { return nil }
