package pipeio

// SetHandOver replaces what a whole write calls after it (sched_yield) and
// returns the function that puts it back.
func SetHandOver(f func()) (restore func()) {
	old := handOver
	handOver = f
	return func() { handOver = old }
}
