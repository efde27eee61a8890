package httpguard

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
)

// DefaultMaxBodyBytes is the body limit of a zero bodyLimit: 3 MiB, below the
// go-sdk's own 4 MiB so the SDK's plain-text 413 is never the one a client sees.
const DefaultMaxBodyBytes = 3 << 20

// bodyLimit bounds the request body. A declared Content-Length over the limit
// is refused before anything is read; the read itself is bounded too, so
// chunked and HTTP/2 bodies without a length cannot exceed it.
//
// Its Handler also makes the body readable once and shareable: later stages
// call [readBody] or [RequestMessage] and get the same bytes, and the next
// handler still reads the full body from r.Body.
//
// The zero value limits bodies to DefaultMaxBodyBytes.
type bodyLimit struct {
	// Max is the largest body accepted, in bytes. Zero or negative means
	// DefaultMaxBodyBytes; there is no way to disable the limit.
	Max int64
}

func (b bodyLimit) max() int64 {
	if b.Max <= 0 {
		return DefaultMaxBodyBytes
	}
	return b.Max
}

// Check refuses a request whose declared Content-Length exceeds the limit.
// It reads nothing; bodies of unknown length are bounded by the Handler.
func (b bodyLimit) Check(r *http.Request) error {
	if r.ContentLength > b.max() {
		return fmt.Errorf("content-length %d over %d: %w", r.ContentLength, b.max(), errBodyTooLarge)
	}
	return nil
}

// Handler applies Check, then installs the bounded, read-once body before
// calling next. Exceeding the limit while reading surfaces as errBodyTooLarge
// from readBody (and as *http.MaxBytesError from r.Body reads).
func (b bodyLimit) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := b.Check(r); err != nil {
			writeCheckError(w, nil, err)
			return
		}
		r, st, created := withState(r)
		if created {
			defer st.release()
		}
		if !st.body.installed {
			st.body.install(w, r.Body, r.ContentLength, b.max())
			st.reader = bodyReader{c: &st.body}
			r.Body = &st.reader
		}
		next.ServeHTTP(w, r)
	})
}

// readBody returns the whole request body, reading it at most once per
// request when a bodyLimit handler ran earlier; later calls return the same
// bytes. The returned slice must not be modified, and a caller that keeps it
// after the request ends should copy it. Without a bodyLimit stage it reads
// the body bounded by DefaultMaxBodyBytes and replaces r.Body so the next
// reader still sees it. Errors wrap errBodyTooLarge or errBadBody.
func readBody(r *http.Request) ([]byte, error) {
	if st := stateFrom(r.Context()); st != nil && st.body.installed {
		st.body.exposed = true // the caller may keep the bytes: never recycle them
		return st.body.bytes()
	}
	if r.Body == nil {
		return nil, nil
	}
	data, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, DefaultMaxBodyBytes))
	if err != nil {
		return nil, bodyError(err)
	}
	r.Body = io.NopCloser(bytes.NewReader(data))
	return data, nil
}

const (
	pooledBufStart = 4 << 10  // first chunk for bodies of unknown length
	pooledBufMax   = 64 << 10 // larger buffers are not kept
)

var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, pooledBufStart); return &b }}

// bodyCache reads the bounded body once into one buffer.
type bodyCache struct {
	installed bool
	src       io.ReadCloser
	declared  int64 // Content-Length, -1 when unknown
	max       int64

	loaded   bool
	buf      []byte
	pooled   *[]byte // buf's pool slot, nil when buf was allocated outright
	err      error
	exposed  bool
	released bool
}

func (c *bodyCache) install(w http.ResponseWriter, body io.ReadCloser, declared, max int64) {
	c.installed, c.declared, c.max = true, declared, max
	switch {
	case body == nil:
		c.src = http.NoBody
	case declared >= 0:
		c.src = body // the server never yields more than Content-Length
	default:
		c.src = http.MaxBytesReader(w, body, max)
	}
}

// bytes returns the body, loading it on first use.
func (c *bodyCache) bytes() ([]byte, error) {
	if !c.loaded {
		c.loaded = true
		c.err = c.load()
	}
	if c.released && c.err == nil {
		return nil, fmt.Errorf("body used after the request ended: %w", errBadBody)
	}
	return c.buf, c.err
}

func (c *bodyCache) load() error {
	if c.declared >= 0 {
		return c.loadKnown()
	}
	c.pooled = bufPool.Get().(*[]byte)
	buf := (*c.pooled)[:0]
	for {
		if len(buf) == cap(buf) {
			buf = c.grow(buf)
		}
		n, err := c.src.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			c.buf = buf
			return nil
		}
		if err != nil {
			return bodyError(err)
		}
	}
}

// grow doubles buf, returning a small pooled one to the pool at once.
func (c *bodyCache) grow(buf []byte) []byte {
	next := make([]byte, len(buf), min(2*cap(buf)+pooledBufStart, int(c.max)+1))
	copy(next, buf)
	if c.pooled != nil {
		*c.pooled = buf[:0]
		bufPool.Put(c.pooled)
		c.pooled = nil
	}
	if cap(next) <= pooledBufMax {
		c.pooled = &next
	}
	return next
}

func (c *bodyCache) loadKnown() error {
	n := int(c.declared)
	if n <= pooledBufMax {
		c.pooled = bufPool.Get().(*[]byte)
		if cap(*c.pooled) < n {
			*c.pooled = make([]byte, 0, n)
		}
		c.buf = (*c.pooled)[:n]
	} else {
		c.buf = make([]byte, n)
	}
	if _, err := io.ReadFull(c.src, c.buf); err != nil {
		c.buf = nil
		return bodyError(err)
	}
	return nil
}

func (c *bodyCache) release() {
	if c.pooled != nil && !c.exposed && cap(*c.pooled) <= pooledBufMax {
		*c.pooled = (*c.pooled)[:0]
		bufPool.Put(c.pooled)
	}
	c.pooled, c.buf, c.released = nil, nil, true
}

func bodyError(err error) error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return fmt.Errorf("body over %d bytes: %w", mbe.Limit, errBodyTooLarge)
	}
	return fmt.Errorf("reading body: %w", errors.Join(errBadBody, err))
}

// bodyReader is what later handlers see as r.Body: the cached bytes.
type bodyReader struct {
	c   *bodyCache
	off int
}

func (b *bodyReader) Read(p []byte) (int, error) {
	buf, err := b.c.bytes()
	if err != nil {
		if errors.Is(err, errBodyTooLarge) {
			return 0, &http.MaxBytesError{Limit: b.c.max} // what net/http readers expect
		}
		return 0, err
	}
	if b.off >= len(buf) {
		return 0, io.EOF
	}
	n := copy(p, buf[b.off:])
	b.off += n
	return n, nil
}

// WriteTo lets io.Copy take the cached bytes without an extra buffer.
func (b *bodyReader) WriteTo(w io.Writer) (int64, error) {
	buf, err := b.c.bytes()
	if err != nil {
		return 0, err
	}
	n, err := w.Write(buf[b.off:])
	b.off += n
	return int64(n), err
}

func (b *bodyReader) Close() error { return nil }
