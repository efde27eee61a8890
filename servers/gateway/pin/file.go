package pin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/bulwarkmcp/bulwark/kernel/atomicfile"
)

// maxFile is the largest pin file read.
const maxFile = 256 << 20

// file is a Storage in one JSON file, written atomically (a temporary file
// of mode 0600, synced, renamed over the old one) in a directory of mode
// 0700, with an exclusive lock file beside it for every update. A file
// that does not verify is an error (errCorrupt), never reset; so is a
// file or directory that others may write.
type file struct {
	path string

	mu     sync.Mutex
	cached *pinState
	stat   fs.FileInfo
}

// newFile returns the file at path, creating its directory (mode 0700)
// if missing. The file itself is created by the first update.
func newFile(path string) (*file, error) {
	if path == "" {
		return nil, errors.New("pin file: no path")
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("pin directory: %w", err)
	}
	if err := notWritableByOthers(dir); err != nil {
		return nil, err
	}
	return &file{path: path}, nil
}

func notWritableByOthers(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("%w: %s is writable by others (mode %v): chmod go-w it", errCorrupt, path, fi.Mode().Perm())
	}
	return nil
}

// Load implements Storage. It rereads the file only when it changed since
// the last read, so a gateway sees what `bulwark gateway approve` pinned.
// The returned State is shared: callers must not modify it.
func (f *file) Load(context.Context) (*pinState, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.readLocked()
}

func (f *file) readLocked() (*pinState, error) {
	fi, err := os.Stat(f.path)
	if errors.Is(err, fs.ErrNotExist) {
		f.cached, f.stat = newState(), nil
		return f.cached, nil
	}
	if err != nil {
		return nil, fmt.Errorf("pin file: %w", err)
	}
	if f.cached != nil && f.stat != nil && os.SameFile(fi, f.stat) && fi.ModTime().Equal(f.stat.ModTime()) && fi.Size() == f.stat.Size() {
		return f.cached, nil
	}
	s, err := f.read()
	if err != nil {
		return nil, err
	}
	f.cached, f.stat = s, fi
	return s, nil
}

// read reads and verifies the file.
func (f *file) read() (*pinState, error) {
	if err := notWritableByOthers(f.path); err != nil {
		return nil, err
	}
	file, err := os.Open(f.path)
	if err != nil {
		return nil, fmt.Errorf("pin file: %w", err)
	}
	defer file.Close()
	b, err := io.ReadAll(io.LimitReader(file, maxFile+1))
	if err != nil {
		return nil, fmt.Errorf("pin file: %w", err)
	}
	if len(b) > maxFile {
		return nil, fmt.Errorf("%w: %s is larger than %d bytes", errCorrupt, f.path, maxFile)
	}
	s, err := decodeState(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.path, err)
	}
	return s, nil
}

// decodeState parses and verifies a pin file's bytes: unknown members and
// trailing data are refused.
func decodeState(b []byte) (*pinState, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	s := new(pinState)
	if err := dec.Decode(s); err != nil {
		return nil, fmt.Errorf("%w: %v", errCorrupt, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%w: data after the state", errCorrupt)
	}
	if s.Upstreams == nil {
		s.Upstreams = map[string]*upstreamPins{}
	}
	if err := s.verify(); err != nil {
		return nil, err
	}
	return s, nil
}

// Update implements Storage, holding the lock file from the read to the
// rename.
func (f *file) Update(ctx context.Context, fn func(*pinState) error) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	unlock, err := atomicfile.Lock(ctx, f.path+".lock", true)
	if err != nil {
		return err
	}
	defer unlock()
	f.stat = nil // another process may have written within the stat's resolution
	cur, err := f.readLocked()
	if err != nil {
		return err
	}
	next := cur.clone()
	if err := fn(next); err != nil {
		if errors.Is(err, errNoChange) {
			return nil
		}
		return err
	}
	if err := atomicfile.Write(f.path, next.encode(true), 0o600, nil); err != nil {
		return fmt.Errorf("writing pin file: %w", err)
	}
	f.cached, f.stat = next, nil
	if fi, err := os.Stat(f.path); err == nil {
		f.stat = fi
	}
	return nil
}
