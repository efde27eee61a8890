// Package bench holds benchmarks that compare side by side in one run:
// every figure is a ratio against a baseline measured in the same process,
// interleaved call by call so that the machine's noise falls on both.
//
// Run them all with:
//
//	go test -run '^$' -bench . -benchtime 2000x ./bench/
//
// The figures and the machine they were taken on are in docs/performance.md.
package bench
