package store

// ErrBadURLForTest exposes the Redis URL error to the external tests.
var ErrBadURLForTest = errBadURL
