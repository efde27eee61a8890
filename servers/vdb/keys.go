package vdb

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/bulwarkmcp/bulwark/kernel/atomicfile"
	"github.com/bulwarkmcp/bulwark/kernel/seal"
)

// KeyStore holds the VDB keys sign-ins stored, one per principal. Keys
// never leave it except into an upstream Authorization header.
type KeyStore interface {
	Get(principal string) (key string, ok bool, err error)
	Put(principal, key string) error
	Delete(principal string) (existed bool, err error)
}

// purposeKeyAtRest is the HKDF purpose of keys sealed at rest, apart from
// the device-grant handles'.
const purposeKeyAtRest = "vdb-key-at-rest"

// keyTTL is how long a stored key stays (the sealed copy expires with it).
const keyTTL = 365 * 24 * time.Hour

// MemoryKeys keeps keys in memory, each sealed at rest under its own HKDF
// purpose and bound to its principal.
type MemoryKeys struct {
	sealer *seal.Sealer
	mu     sync.Mutex
	m      map[string]string
}

// NewMemoryKeys returns an empty store sealing with sealer.
func NewMemoryKeys(sealer *seal.Sealer) *MemoryKeys {
	return &MemoryKeys{sealer: sealer, m: map[string]string{}}
}

// Get implements KeyStore.
func (k *MemoryKeys) Get(principal string) (string, bool, error) {
	k.mu.Lock()
	h, ok := k.m[principal]
	k.mu.Unlock()
	if !ok {
		return "", false, nil
	}
	b, err := k.sealer.OpenFor(purposeKeyAtRest, principal, h)
	if err != nil {
		return "", false, nil // expired or unreadable: as if signed out
	}
	return string(b), true, nil
}

// Put implements KeyStore.
func (k *MemoryKeys) Put(principal, key string) error {
	h, err := k.sealer.SealFor(purposeKeyAtRest, principal, []byte(key), keyTTL)
	if err != nil {
		return fmt.Errorf("sealing the key: %w", err)
	}
	k.mu.Lock()
	k.m[principal] = h
	k.mu.Unlock()
	return nil
}

// Delete implements KeyStore.
func (k *MemoryKeys) Delete(principal string) (bool, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	_, ok := k.m[principal]
	delete(k.m, principal)
	return ok, nil
}

// FileKeys keeps the one local user's key in a file of mode 0600 (stdio).
type FileKeys struct {
	path string
	mu   sync.Mutex
}

// NewFileKeys stores the key at path; its directory is created 0700.
func NewFileKeys(path string) *FileKeys { return &FileKeys{path: path} }

// DefaultKeyFile is <user config dir>/bulwark/vulnetix-key.
func DefaultKeyFile() (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "bulwark", "vulnetix-key"), nil
}

// Get implements KeyStore. A file others can read is refused, not used.
func (f *FileKeys) Get(string) (string, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	st, err := os.Stat(f.path)
	if errors.Is(err, os.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("reading the stored key: %w", err)
	}
	if st.Mode().Perm()&0o077 != 0 {
		return "", false, fmt.Errorf("the stored key file %s is readable by others (mode %v); remove it and sign in again", f.path, st.Mode().Perm())
	}
	b, err := os.ReadFile(f.path)
	if err != nil {
		return "", false, fmt.Errorf("reading the stored key: %w", err)
	}
	key := strings.TrimSpace(string(b))
	return key, key != "", nil
}

// Put implements KeyStore: written through kernel/atomicfile (a temporary
// file of mode 0600, synced, renamed over the old one).
func (f *FileKeys) Put(_ string, key string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	dir := filepath.Dir(f.path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("storing the key: %w", err)
	}
	if err := atomicfile.Write(f.path, []byte(key+"\n"), 0o600, nil); err != nil {
		return fmt.Errorf("storing the key: %w", err)
	}
	return nil
}

// Delete implements KeyStore.
func (f *FileKeys) Delete(string) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	err := os.Remove(f.path)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}
