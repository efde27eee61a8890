package localzone

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bulwarkmcp/bulwark/servers/dns"
)

// store is the data directory: zone files, sidecars and the state file,
// with the locking that lets several processes share it.
//
// Reads take the in-process read lock and a shared flock; mutations take the
// write lock and an exclusive flock, re-read what they change from disk,
// and write it back with writeAtomic. Parsed files are cached under their
// statKey, so an unchanged file is not parsed twice and a changed one
// (by this process, another one, or an editor) is.
type store struct {
	dir string
	mu  sync.RWMutex

	// now and nameservers serve adoption and serial bumps.
	now         func() time.Time
	nameservers []string
	noSync      bool

	cacheMu sync.Mutex
	zones   map[string]cachedZone
	metas   map[string]cachedMeta

	// gen counts committed changes to zone files, for the responder.
	gen atomic.Uint64
}

type cachedZone struct {
	key  statKey
	data *zoneData
	err  error
}

type cachedMeta struct {
	key  statKey
	meta *sidecar
}

// zoneEntry is one zone as the directory holds it. data is nil for a
// secondary zone and for a zone file that does not parse (err says why).
// Entries from reads are shared: only a mutation's own fresh entry may be
// changed.
type zoneEntry struct {
	name string
	meta *sidecar
	data *zoneData
	err  error
}

func newStore(dir string, now func() time.Time, nameservers []string) *store {
	return &store{
		dir: dir, now: now, nameservers: nameservers,
		zones: map[string]cachedZone{}, metas: map[string]cachedMeta{},
	}
}

// errAdopt says a zone file without a sidecar was found: a writer must
// adopt it before the read can go on.
var errAdopt = errors.New("zone file without sidecar")

// read runs fn under the read locks. When fn meets a zone file nobody has
// adopted yet, the zone is adopted under the write locks and fn runs again.
func (s *store) read(ctx context.Context, fn func() error) error {
	for range 3 {
		err := s.readOnce(ctx, fn)
		if !errors.Is(err, errAdopt) {
			return err
		}
		if err := s.write(ctx, func() error { return s.adoptAll(ctx) }); err != nil {
			return err
		}
	}
	return errors.New("zone files keep appearing without sidecars")
}

func (s *store) readOnce(ctx context.Context, fn func() error) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	unlock, err := flock(ctx, s.dir, false)
	if err != nil {
		return err
	}
	defer unlock()
	return fn()
}

// write runs fn under the write locks.
func (s *store) write(ctx context.Context, fn func() error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	unlock, err := flock(ctx, s.dir, true)
	if err != nil {
		return err
	}
	defer unlock()
	return fn()
}

// list returns every zone of the directory, in no particular order. The
// caller holds a lock.
func (s *store) list() ([]*zoneEntry, error) {
	files, err := os.ReadDir(s.dir)
	if err != nil {
		return nil, fmt.Errorf("listing %s: %w", s.dir, err)
	}
	zoneFiles := map[string]bool{}
	var metaOnly []string
	for _, f := range files {
		n := f.Name()
		if z, ok := strings.CutSuffix(n, zoneSuffix); ok && validZoneFileName(z) {
			zoneFiles[z] = true
		} else if z, ok := strings.CutSuffix(n, sidecarSuffix); ok && validZoneFileName(z) {
			metaOnly = append(metaOnly, z)
		}
	}
	var out []*zoneEntry
	for z := range zoneFiles {
		e, err := s.entry(z, true, false)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	for _, z := range metaOnly {
		if zoneFiles[z] {
			continue
		}
		if e, err := s.entry(z, false, false); err != nil {
			return nil, err
		} else if e != nil {
			out = append(out, e)
		}
	}
	return out, nil
}

// validZoneFileName keeps temporary and foreign files out of the listing.
func validZoneFileName(z string) bool {
	return z != "" && !strings.HasPrefix(z, ".") && validateZoneName(z) == nil
}

// find resolves a zone reference (an id or a name) among the zones. The
// caller holds a lock.
func (s *store) find(ref string) (*zoneEntry, error) {
	ref = canonicalZoneName(ref)
	if id, err := strconv.ParseInt(ref, 10, 64); err == nil {
		zones, err := s.list()
		if err != nil {
			return nil, err
		}
		for _, e := range zones {
			if e.meta != nil && e.meta.ID == id {
				return e, nil
			}
		}
		return nil, errNotFound("zone %d not found", id)
	}
	if validateZoneName(ref) != nil {
		return nil, errNotFound("zone %q not found", ref)
	}
	_, err := os.Stat(filepath.Join(s.dir, zoneFile(ref)))
	e, err2 := s.entry(ref, err == nil, false)
	if err2 != nil {
		return nil, err2
	}
	if e == nil {
		return nil, errNotFound("zone %q not found", ref)
	}
	return e, nil
}

// fresh re-reads a zone from disk, bypassing the caches, for a mutation
// to change. The caller holds the write locks.
func (s *store) fresh(name string) (*zoneEntry, error) {
	_, err := os.Stat(filepath.Join(s.dir, zoneFile(name)))
	e, err2 := s.entry(name, err == nil, true)
	if err2 != nil {
		return nil, err2
	}
	if e == nil {
		return nil, errNotFound("zone %q not found", name)
	}
	return e, nil
}

// entry assembles a zone from its files. Without a zone file only a
// secondary zone's sidecar makes a zone (nil otherwise: a primary's sidecar
// left behind by a crash). With a zone file but no sidecar it is errAdopt.
func (s *store) entry(name string, hasZoneFile, fresh bool) (*zoneEntry, error) {
	meta, err := s.readMeta(name, fresh)
	if err != nil {
		return nil, err
	}
	e := &zoneEntry{name: name, meta: meta}
	switch {
	case meta != nil && meta.Mode == dns.ModeSecondary:
		return e, nil
	case !hasZoneFile:
		return nil, nil
	case meta == nil:
		return nil, errAdopt
	}
	e.data, e.err = s.readZone(name, fresh)
	if e.err != nil && !isSyntax(e.err) {
		return nil, e.err
	}
	return e, nil
}

func isSyntax(err error) bool {
	var se *syntaxError
	return errors.As(err, &se)
}

// readMeta reads a zone's sidecar (nil when there is none).
func (s *store) readMeta(name string, fresh bool) (*sidecar, error) {
	path := filepath.Join(s.dir, sidecarFile(name))
	f, key, err := openKeyed(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if !fresh {
		s.cacheMu.Lock()
		c, ok := s.metas[name]
		s.cacheMu.Unlock()
		if ok && c.key == key {
			return c.meta, nil
		}
	}
	data, err := io.ReadAll(io.LimitReader(f, maxZonefileBytes))
	if err != nil {
		return nil, fmt.Errorf("reading sidecar of %s: %w", name, err)
	}
	m := &sidecar{}
	if err := json.Unmarshal(data, m); err != nil {
		return nil, fmt.Errorf("decoding sidecar of %s: %w", name, err)
	}
	if !fresh {
		s.cacheMu.Lock()
		s.metas[name] = cachedMeta{key: key, meta: m}
		s.cacheMu.Unlock()
	}
	return m, nil
}

// readZone parses a zone file. Fresh reads always parse and return data
// the caller owns.
func (s *store) readZone(name string, fresh bool) (*zoneData, error) {
	f, key, err := openKeyed(filepath.Join(s.dir, zoneFile(name)))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if !fresh {
		s.cacheMu.Lock()
		c, ok := s.zones[name]
		s.cacheMu.Unlock()
		if ok && c.key == key {
			return c.data, c.err
		}
	}
	text, err := io.ReadAll(io.LimitReader(f, maxZonefileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading zone file of %s: %w", name, err)
	}
	data, err := parseZonefile(context.Background(), string(text), name, parseOptions{defaultTTL: fallbackTTL})
	if err != nil && !isSyntax(err) {
		return nil, err
	}
	if !fresh {
		s.cacheMu.Lock()
		s.zones[name] = cachedZone{key: key, data: data, err: err}
		s.cacheMu.Unlock()
	}
	return data, err
}

// openKeyed opens path and returns the statKey of the opened file.
func openKeyed(path string) (*os.File, statKey, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, statKey{}, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, statKey{}, err
	}
	return f, keyOf(fi), nil
}
