package localzone

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/bulwarkmcp/bulwark/servers/dns"
)

// Crash consistency. A mutation writes up to three files, each atomically,
// in an order chosen so that a crash between any two leaves a pair that
// reads as a consistent zone:
//
//  1. the state file, reserving the action (and zone) ids: a crash after it
//     only burns an id nobody saw;
//  2. the zone file, when records changed: it is the truth about records,
//     TTLs and comments, so after a crash here the zone holds the new data;
//  3. the sidecar: a stale sidecar only lacks the newest action and the
//     labels or protection of RRSets it does not know, and its entries for
//     RRSets the zone file no longer holds are ignored.
//
// Creation writes the sidecar before the zone file (a sidecar alone is no
// zone, so a crash leaves nothing half-made); deletion removes the zone file
// first (a zone file alone would be adopted afresh, losing its id).

// adoptAll gives every zone file without a sidecar one: a new id, the
// file's modification time as creation time, and the apex NS names of the
// file (or the configured ones) as its assigned nameservers. The caller
// holds the write locks.
func (s *store) adoptAll(ctx context.Context) error {
	files, err := os.ReadDir(s.dir)
	if err != nil {
		return fmt.Errorf("listing %s: %w", s.dir, err)
	}
	names := map[string]bool{}
	for _, f := range files {
		names[f.Name()] = true
	}
	for _, f := range files {
		z, ok := strings.CutSuffix(f.Name(), zoneSuffix)
		if !ok || !validZoneFileName(z) || names[sidecarFile(z)] {
			continue
		}
		if err := s.adopt(z, f); err != nil {
			return err
		}
	}
	return ctx.Err()
}

func (s *store) adopt(z string, f os.DirEntry) error {
	st, err := readState(s.dir)
	if err != nil {
		return err
	}
	created := s.now().UTC()
	if fi, err := f.Info(); err == nil {
		created = fi.ModTime().UTC()
	}
	meta := &sidecar{
		Version: 1, ID: st.NextZoneID, Name: z, Created: created, Mode: dns.ModePrimary,
		Labels: map[string]string{}, Nameservers: s.nameservers, Actions: []dns.Action{},
	}
	if data, err := s.readZone(nil, z, false); err == nil {
		if ns := data.sets["@/NS"]; ns != nil {
			meta.Nameservers = nil
			for _, r := range ns.records {
				meta.Nameservers = append(meta.Nameservers, r.value)
			}
		}
	}
	st.NextZoneID++
	if err := writeJSON(s.dir, stateFileName, st, s.noSync); err != nil {
		return err
	}
	return writeJSON(s.dir, sidecarFile(z), meta, s.noSync)
}

// newAction reserves the next action id in st and returns the action,
// finished: local operations complete before they return.
func (s *store) newAction(st *dirState, command string, zoneID int64) dns.Action {
	now := s.now().UTC()
	a := dns.Action{
		ID: st.NextActionID, Command: command, Status: dns.ActionSuccess, Progress: 100,
		Started: now, Finished: &now, Resources: []dns.ActionResource{{ID: zoneID, Type: "zone"}},
	}
	st.NextActionID++
	return a
}

// commit persists a mutated zone in the order described above. When the
// records changed, the SOA serial is bumped first.
func (s *store) commit(st *dirState, e *zoneEntry, a *dns.Action, dataChanged bool, limit int) error {
	if err := writeJSON(s.dir, stateFileName, st, s.noSync); err != nil {
		return err
	}
	if dataChanged {
		if err := s.writeZoneData(e.data); err != nil {
			return err
		}
	}
	if e.data != nil {
		e.meta.prune(e.data)
	}
	if a != nil {
		e.meta.record(*a, limit)
	}
	return writeJSON(s.dir, sidecarFile(e.name), e.meta, s.noSync)
}

// writeZoneData bumps the serial of z and writes its zone file.
func (s *store) writeZoneData(z *zoneData) error {
	soa, err := z.soa()
	if err != nil {
		return fmt.Errorf("zone %s: %w", z.name, err)
	}
	soa.Serial = s.serial.next(z.name, soa.Serial, s.now())
	z.setSOA(soa)
	text := z.render()
	// Never write a file that would not read back.
	back, err := parseZonefile(context.Background(), string(text), z.name, parseOptions{defaultTTL: fallbackTTL})
	if err != nil {
		return errInvalid("records", "the zone would not parse back: %v", err)
	}
	if err := writeAtomic(s.dir, zoneFile(z.name), text, 0o644, s.noSync); err != nil {
		return err
	}
	s.bump()
	// The file just written parses to back: cache it under the file's key,
	// so the next read does not parse it again. The exclusive lock is held,
	// so no other writer of the store is between the write and the stat (an
	// editor that is gets a new key).
	if fi, err := os.Stat(filepath.Join(s.dir, zoneFile(z.name))); err == nil {
		s.cache.putZone(z.name, &zoneVersion{key: keyOf(fi), data: s.cacheable(back), cost: back.memSize()})
	}
	return nil
}

// create writes a new zone: state, sidecar, then (primary) the zone file.
func (s *store) create(st *dirState, e *zoneEntry) error {
	if err := writeJSON(s.dir, stateFileName, st, s.noSync); err != nil {
		return err
	}
	if e.data != nil {
		e.meta.prune(e.data)
	}
	if err := writeJSON(s.dir, sidecarFile(e.name), e.meta, s.noSync); err != nil {
		return err
	}
	if e.data == nil {
		return nil
	}
	return s.writeZoneData(e.data)
}

// remove deletes a zone: the file that makes it a zone first, then the
// state, which takes over the zone's history and the delete action, then
// the sidecar.
func (s *store) remove(st *dirState, e *zoneEntry, a dns.Action, limit int) error {
	first := zoneFile(e.name)
	if e.meta.Mode == dns.ModeSecondary {
		first = sidecarFile(e.name)
	}
	if err := removeDurably(s.dir, first, s.noSync); err != nil {
		return err
	}
	s.cache.drop(e.name)
	s.bump()
	st.Deleted = append(append(st.Deleted, e.meta.Actions...), a)
	if over := len(st.Deleted) - limit; over > 0 {
		st.Deleted = append([]dns.Action(nil), st.Deleted[over:]...)
	}
	if err := writeJSON(s.dir, stateFileName, st, s.noSync); err != nil {
		return err
	}
	return removeDurably(s.dir, sidecarFile(e.name), s.noSync)
}

// bump counts a committed change and tells whoever listens.
func (s *store) bump() {
	s.gen.Add(1)
	select {
	case s.changed <- struct{}{}:
	default:
	}
}

// removeTemp deletes temporary files a killed writer left behind. The
// caller holds the write locks, so no writer is between creating and
// renaming one.
func (s *store) removeTemp() error {
	files, err := os.ReadDir(s.dir)
	if err != nil {
		return fmt.Errorf("listing %s: %w", s.dir, err)
	}
	for _, f := range files {
		if strings.HasPrefix(f.Name(), ".tmp-") {
			if err := os.Remove(filepath.Join(s.dir, f.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("removing %s: %w", f.Name(), err)
			}
		}
	}
	return nil
}
