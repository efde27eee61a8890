package store

// The errors of ParseURL, for the external tests.
var (
	ErrBadURLForTest     = errBadURL
	ErrSkipVerifyForTest = errSkipVerify
	ErrTwoSecretsForTest = errTwoSecrets
)

// TagForTest is the hash tag of a principal's keys.
func TagForTest(principal string) string { return tag(principal) }
