//go:build !unix

package pin

import "context"

// flock is a no-op where flock(2) is missing: the File's mutex still
// orders the goroutines of one process, but a gateway and `bulwark gateway
// approve` running at the same moment may lose one's update.
func flock(context.Context, string) (func(), error) { return func() {}, nil }
