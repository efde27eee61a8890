//go:build race

package authz

// raceEnabled: the race detector slows the differential tests tenfold;
// they draw fewer cases under it.
const raceEnabled = true
