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
	"github.com/bulwarkmcp/bulwark/servers/dns/zonefile"
)

// store is the data directory: zone files, sidecars and the state file,
// with the locking that lets several processes share it.
//
// Reads take the in-process read lock and a shared flock; mutations take the
// write lock and an exclusive flock, re-read what they change from disk,
// and write it back with writeAtomic. Parsed files are kept in cache
// (cache.go) under their statKey, so an unchanged file is not parsed twice
// and a changed one (by this process, another one, or an editor) is. A
// read parses no file while it holds a lock: it notes the zones whose files
// are not cached, lets the locks go, loads them, and runs again (read).
type store struct {
	dir string
	mu  sync.RWMutex

	// now and nameservers serve adoption and serial bumps.
	now         func() time.Time
	nameservers []string
	noSync      bool

	cache *zoneCache

	// gen counts committed changes to zone files, for the responder;
	// changed hears of each (a send that would block is dropped: one
	// pending signal says enough).
	gen     atomic.Uint64
	changed chan struct{}

	// serial is each zone's serial policy (serial.go).
	serial serialPolicies
}

// zoneEntry is one zone as the directory holds it. data is nil for a
// secondary zone and for a zone file that does not parse (err says why).
// Entries from reads share the cache's values, which nobody changes: only
// a mutation's own fresh entry may be changed.
type zoneEntry struct {
	name string
	meta *sidecar
	data *zoneData
	err  error
}

func newStore(dir string, now func() time.Time, nameservers []string, cacheBytes int64) *store {
	return &store{dir: dir, now: now, nameservers: nameservers, cache: newZoneCache(cacheBytes), changed: make(chan struct{}, 1)}
}

// errAdopt says a zone file without a sidecar was found: a writer must
// adopt it before the read can go on.
var errAdopt = errors.New("zone file without sidecar")

// errPending says a read met zone files that are not cached: they are
// loaded with no lock held, and the read runs again.
var errPending = errors.New("zone files to load")

// readTx is one run of a read under the locks. It collects the zones whose
// files are not cached; on the last run (inline) they are loaded under the
// locks instead, so that a file changing all the time cannot stall a read.
type readTx struct {
	inline  bool
	pending map[string]loadParts
	// zones and metas are the versions this read loaded; they serve it
	// whether or not the cache kept them (a zone over the cache's bound).
	zones map[string]*zoneVersion
	metas map[string]*metaVersion
}

// loadParts says which of a zone's files a read must load.
type loadParts uint8

const (
	loadMeta loadParts = 1 << iota
	loadZone
)

// postpone notes that parts of name's files must be loaded, reporting
// false when they are to be loaded now (no tx: a mutation; or the last
// run).
func (tx *readTx) postpone(name string, parts loadParts) bool {
	if tx == nil || tx.inline {
		return false
	}
	if tx.pending == nil {
		tx.pending = map[string]loadParts{}
	}
	tx.pending[name] |= parts
	return true
}

// maxLoadRounds is how often a read lets its locks go to load files.
const maxLoadRounds = 4

// read runs fn under the read locks. Zone files fn meets that are not
// cached are loaded with no lock held, and fn runs again. When fn meets a
// zone file nobody has adopted yet, the zone is adopted under the write
// locks and fn runs again.
func (s *store) read(ctx context.Context, fn func(tx *readTx) error) error {
	adoptions := 0
	tx := &readTx{zones: map[string]*zoneVersion{}, metas: map[string]*metaVersion{}}
	for round := 0; ; round++ {
		tx.inline, tx.pending = round >= maxLoadRounds, nil
		err := s.readOnce(ctx, func() error { return fn(tx) })
		switch {
		case len(tx.pending) > 0:
			if err := s.load(ctx, tx); err != nil {
				return err
			}
		case errors.Is(err, errAdopt) && adoptions < 3:
			adoptions++
			if err := s.write(ctx, func() error { return s.adoptAll(ctx) }); err != nil {
				return err
			}
		case errors.Is(err, errAdopt):
			return errors.New("zone files keep appearing without sidecars")
		default:
			return err
		}
	}
}

func (s *store) readOnce(ctx context.Context, fn func() error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
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

// load reads the files of the named zones into the cache, with no store
// lock held (the caller holds none).
func (s *store) load(ctx context.Context, tx *readTx) error {
	for name, parts := range tx.pending {
		if parts&loadMeta != 0 {
			v, err := s.loadMeta(name)
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
			tx.metas[name] = v
		}
		if parts&loadZone != 0 {
			v, err := s.loadZone(ctx, name)
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
			tx.zones[name] = v
		}
	}
	return nil
}

// loadedZone returns the version of name's zone file with key that tx
// loaded, or the cache's.
func (s *store) loadedZone(tx *readTx, name string, key statKey) (*zoneVersion, bool) {
	if tx != nil {
		if v := tx.zones[name]; v != nil && v.key == key {
			return v, true
		}
	}
	return s.cache.zone(name, key)
}

// loadedMeta is loadedZone for sidecars.
func (s *store) loadedMeta(tx *readTx, name string, key statKey) (*metaVersion, bool) {
	if tx != nil {
		if v := tx.metas[name]; v != nil && v.key == key {
			return v, true
		}
	}
	return s.cache.meta(name, key)
}

// list returns every zone of the directory, in no particular order. The
// caller holds a lock; tx is nil under the write locks.
func (s *store) list(tx *readTx) ([]*zoneEntry, error) {
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
	pending := false
	add := func(z string, hasZoneFile bool) error {
		e, err := s.entry(tx, z, hasZoneFile, false)
		switch {
		case errors.Is(err, errPending):
			pending = true // go on: one round loads every zone missing
		case err != nil:
			return err
		case e != nil:
			out = append(out, e)
		}
		return nil
	}
	for z := range zoneFiles {
		if err := add(z, true); err != nil {
			return nil, err
		}
	}
	for _, z := range metaOnly {
		if zoneFiles[z] {
			continue
		}
		if err := add(z, false); err != nil {
			return nil, err
		}
	}
	if pending {
		return nil, errPending
	}
	return out, nil
}

// validZoneFileName keeps temporary and foreign files out of the listing.
func validZoneFileName(z string) bool {
	return z != "" && !strings.HasPrefix(z, ".") && validateZoneName(z) == nil
}

// find resolves a zone reference (an id or a name) among the zones. The
// caller holds a lock; tx is nil under the write locks.
func (s *store) find(tx *readTx, ref string) (*zoneEntry, error) {
	ref = canonicalZoneName(ref)
	if id, err := strconv.ParseInt(ref, 10, 64); err == nil {
		return s.findID(tx, id)
	}
	if validateZoneName(ref) != nil {
		return nil, errNotFound("zone %q not found", ref)
	}
	_, err := os.Stat(filepath.Join(s.dir, zoneFile(ref)))
	e, err2 := s.entry(tx, ref, err == nil, false)
	if err2 != nil {
		return nil, err2
	}
	if e == nil {
		return nil, errNotFound("zone %q not found", ref)
	}
	return e, nil
}

// findID finds the zone with id by its sidecar (only a zone with a sidecar
// has an id), reading no other zone's records.
func (s *store) findID(tx *readTx, id int64) (*zoneEntry, error) {
	var found *zoneEntry
	err := s.eachMeta(tx, func(name string, m *sidecar, hasZoneFile bool) (bool, error) {
		if m.ID != id {
			return false, nil
		}
		e, err := s.entry(tx, name, hasZoneFile, false)
		found = e
		return e != nil, err
	})
	switch {
	case err != nil:
		return nil, err
	case found == nil:
		return nil, errNotFound("zone %d not found", id)
	}
	return found, nil
}

// eachMeta calls fn with every sidecar of the directory that makes a zone
// (a secondary zone's, or a primary's beside its zone file), until fn
// stops. It reads no zone file.
func (s *store) eachMeta(tx *readTx, fn func(name string, m *sidecar, hasZoneFile bool) (stop bool, err error)) error {
	files, err := os.ReadDir(s.dir)
	if err != nil {
		return fmt.Errorf("listing %s: %w", s.dir, err)
	}
	names := map[string]bool{}
	for _, f := range files {
		names[f.Name()] = true
	}
	pending := false
	for _, f := range files {
		z, ok := strings.CutSuffix(f.Name(), sidecarSuffix)
		if !ok || !validZoneFileName(z) {
			continue
		}
		m, err := s.readMeta(tx, z, false)
		switch {
		case errors.Is(err, errPending):
			pending = true
			continue
		case err != nil:
			return err
		case m == nil || (m.Mode != dns.ModeSecondary && !names[zoneFile(z)]):
			continue
		}
		if stop, err := fn(z, m, names[zoneFile(z)]); stop || err != nil {
			return err
		}
	}
	if pending {
		return errPending
	}
	return nil
}

// fresh reads a zone from disk for a mutation to change: the sidecar is
// decoded again and the records are a clone of the parsed zone file (the
// cache's when it holds this version). The caller holds the write locks.
func (s *store) fresh(name string) (*zoneEntry, error) {
	_, err := os.Stat(filepath.Join(s.dir, zoneFile(name)))
	e, err2 := s.entry(nil, name, err == nil, true)
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
// Files that are not cached are errPending when tx postpones them.
func (s *store) entry(tx *readTx, name string, hasZoneFile, fresh bool) (*zoneEntry, error) {
	meta, err := s.readMeta(tx, name, fresh)
	if errors.Is(err, errPending) && hasZoneFile {
		tx.postpone(name, loadZone) // most likely needed too: one round loads both
	}
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
	e.data, e.err = s.readZone(tx, name, fresh)
	if e.err != nil && !isSyntax(e.err) {
		return nil, e.err
	}
	return e, nil
}

func isSyntax(err error) bool {
	var se *syntaxError
	return errors.As(err, &se)
}

// readMeta returns a zone's sidecar (nil when there is none): the cached
// version when the file is unchanged. A fresh read decodes the file again
// and returns a sidecar the caller owns.
func (s *store) readMeta(tx *readTx, name string, fresh bool) (*sidecar, error) {
	if fresh {
		m, _, err := s.decodeMeta(name)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return m, err
	}
	fi, err := os.Stat(filepath.Join(s.dir, sidecarFile(name)))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if v, ok := s.loadedMeta(tx, name, keyOf(fi)); ok {
		return v.meta, nil
	}
	if tx.postpone(name, loadMeta) {
		return nil, errPending
	}
	v, err := s.loadMeta(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return v.meta, nil
}

// loadMeta decodes name's sidecar into the cache, unless the cache holds
// this version.
func (s *store) loadMeta(name string) (*metaVersion, error) {
	f, key, err := openKeyed(filepath.Join(s.dir, sidecarFile(name)))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if v, ok := s.cache.meta(name, key); ok {
		return v, nil
	}
	m, n, err := decodeMetaFrom(f, name)
	if err != nil {
		return nil, err
	}
	v := &metaVersion{key: key, meta: m, cost: sidecarFactor * n}
	s.cache.putMeta(name, v)
	return v, nil
}

// decodeMeta reads and decodes name's sidecar, bypassing the cache.
func (s *store) decodeMeta(name string) (*sidecar, int64, error) {
	f, err := os.Open(filepath.Join(s.dir, sidecarFile(name)))
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	return decodeMetaFrom(f, name)
}

func decodeMetaFrom(f *os.File, name string) (*sidecar, int64, error) {
	data, err := io.ReadAll(io.LimitReader(f, maxZonefileBytes))
	if err != nil {
		return nil, 0, fmt.Errorf("reading sidecar of %s: %w", name, err)
	}
	m := &sidecar{}
	if err := json.Unmarshal(data, m); err != nil {
		return nil, 0, fmt.Errorf("decoding sidecar of %s: %w", name, err)
	}
	return m, int64(len(data)), nil
}

// readZone returns a zone file's records: the cached version when the file
// is unchanged. A fresh read returns a clone the caller owns.
func (s *store) readZone(tx *readTx, name string, fresh bool) (*zoneData, error) {
	fi, err := os.Stat(filepath.Join(s.dir, zoneFile(name)))
	if err != nil {
		return nil, err
	}
	v, ok := s.loadedZone(tx, name, keyOf(fi))
	if !ok {
		if tx.postpone(name, loadZone) {
			return nil, errPending
		}
		if v, err = s.loadZone(context.Background(), name); err != nil {
			return nil, err
		}
	}
	if v.err != nil {
		return nil, v.err
	}
	if fresh {
		return v.data.clone(), nil
	}
	return v.data, nil
}

// loadZone parses name's zone file into the cache, unless the cache holds
// this version. The parse takes one of the zonefile package's parse slots
// and stops with ctx; a refused file is cached as its refusal, with no
// records. Reads call it with no lock held.
func (s *store) loadZone(ctx context.Context, name string) (*zoneVersion, error) {
	f, key, err := openKeyed(filepath.Join(s.dir, zoneFile(name)))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if v, ok := s.cache.zone(name, key); ok {
		return v, nil
	}
	release, err := zonefile.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	if v, ok := s.cache.zone(name, key); ok {
		return v, nil // loaded by another read while this one waited
	}
	text, err := io.ReadAll(io.LimitReader(f, maxZonefileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading zone file of %s: %w", name, err)
	}
	data, err := parseZonefile(ctx, string(text), name, parseOptions{defaultTTL: fallbackTTL})
	if err != nil && !isSyntax(err) {
		return nil, err
	}
	v := &zoneVersion{key: key, err: err, cost: int64(zoneOverhead)}
	if err == nil {
		v.data = s.cacheable(data)
		v.cost = data.memSize()
	}
	s.cache.putZone(name, v)
	return v, nil
}

// cacheable readies parsed data to be shared: it gets its sort orders.
func (s *store) cacheable(z *zoneData) *zoneData {
	z.orders = &setOrders{}
	return z
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
