//go:build race

package bench

// raceEnabled: the race detector adds allocations and empties pools at
// random, so allocation counts are not compared under it.
const raceEnabled = true
