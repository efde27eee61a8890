package kernel

// MaxBlobBytesForTest exposes the bound on a result's blobs to the
// external tests.
const MaxBlobBytesForTest = maxBlobBytes

// MaxStdioLineForTest exposes the bound on one stdio message.
const MaxStdioLineForTest = maxStdioLine

// FastAnswered is how many requests the fast path (HTTP or stdio) of s
// answered itself: the tests' proof that it, not the go-sdk, answered.
func FastAnswered(s *Server) int64 { return s.fast.answered.Load() }
