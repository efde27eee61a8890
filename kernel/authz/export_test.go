package authz

// Exposed to the external tests.
var (
	ErrInvalidForTest  = errInvalid
	MaxFileSizeForTest = maxFileSize
)
