//go:build unix

package pin

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// flock takes the exclusive lock on path (created 0600), waiting until it
// is free or ctx ends, and returns the function that releases it. flock(2)
// locks belong to an open file description, so a gateway and `bulwark
// gateway approve` exclude each other, and so do two Files in one process.
func flock(ctx context.Context, path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening lock file: %w", err)
	}
	wait := 200 * time.Microsecond
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() {
				_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
				_ = f.Close()
			}, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			_ = f.Close()
			return nil, fmt.Errorf("locking %s: %w", path, err)
		}
		select {
		case <-ctx.Done():
			_ = f.Close()
			return nil, ctx.Err()
		case <-time.After(wait):
			wait = min(2*wait, 20*time.Millisecond)
		}
	}
}
