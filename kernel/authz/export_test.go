package authz

// Exposed to the external tests.
var (
	ErrInvalidForTest  = errInvalid
	MaxFileSizeForTest = maxFileSize
	RaceEnabledForTest = raceEnabled
)

// SetMaxDirectForTest sets maxDirect for sets parsed from now on and
// returns a function that restores it.
func SetMaxDirectForTest(n int) func() {
	old := maxDirect
	maxDirect = n
	return func() { maxDirect = old }
}

// RaceEnabled: the race detector drops pooled objects at random, so
// allocation counts do not hold under it.
const RaceEnabled = raceEnabled
