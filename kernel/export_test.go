package kernel

// MaxBlobBytesForTest exposes the bound on a result's blobs to the
// external tests.
const MaxBlobBytesForTest = maxBlobBytes
