package authz

// Exposed to the external tests.
var (
	ErrInvalidForTest  = errInvalid
	MaxFileSizeForTest = maxFileSize
	RaceEnabledForTest = raceEnabled
)

// RaceEnabled: the race detector drops pooled objects at random, so
// allocation counts do not hold under it.
const RaceEnabled = raceEnabled
