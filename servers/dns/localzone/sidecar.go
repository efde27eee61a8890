package localzone

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/bulwarkmcp/bulwark/servers/dns"
)

// File names inside the data directory.
const (
	zoneSuffix    = ".zone"
	sidecarSuffix = ".meta.json"
	stateFileName = ".state.json"
)

func zoneFile(zone string) string    { return zone + zoneSuffix }
func sidecarFile(zone string) string { return zone + sidecarSuffix }

// sidecar is what a zone file cannot say about a zone: its id and creation
// time, labels, protection, the nameservers assigned at creation, a
// secondary zone's settings, per-RRSet labels and protection, and the recent
// actions. Entries for RRSets the zone file no longer holds are ignored, and
// dropped on the next write.
type sidecar struct {
	Version            int                      `json:"version"`
	ID                 int64                    `json:"id"`
	Name               string                   `json:"name"`
	Created            time.Time                `json:"created"`
	Mode               string                   `json:"mode"`
	Labels             map[string]string        `json:"labels"`
	Protection         dns.ZoneProtection       `json:"protection"`
	Nameservers        []string                 `json:"nameservers,omitempty"`
	PrimaryNameservers []dns.PrimaryNameserver  `json:"primary_nameservers,omitempty"`
	TTL                int                      `json:"ttl,omitempty"` // secondary zones only
	RRSets             map[string]*rrsetSidecar `json:"rrsets,omitempty"`
	Actions            []dns.Action             `json:"actions"`
}

// rrsetSidecar is the part of an RRSet a zone file cannot hold.
type rrsetSidecar struct {
	Labels    map[string]string `json:"labels,omitempty"`
	Protected bool              `json:"protected,omitempty"`
}

// rrsetMeta returns the sidecar entry of key, creating it when create is set.
func (m *sidecar) rrsetMeta(key string, create bool) *rrsetSidecar {
	if e := m.RRSets[key]; e != nil || !create {
		return e
	}
	if m.RRSets == nil {
		m.RRSets = map[string]*rrsetSidecar{}
	}
	e := &rrsetSidecar{}
	m.RRSets[key] = e
	return e
}

// prune drops RRSet entries z does not hold and entries that say nothing.
func (m *sidecar) prune(z *zoneData) {
	for k, e := range m.RRSets {
		if _, ok := z.sets[k]; !ok || (len(e.Labels) == 0 && !e.Protected) {
			delete(m.RRSets, k)
		}
	}
}

// record appends a to the history, keeping the newest limit actions.
func (m *sidecar) record(a dns.Action, limit int) {
	m.Actions = append(m.Actions, a)
	if over := len(m.Actions) - limit; over > 0 {
		m.Actions = append([]dns.Action(nil), m.Actions[over:]...)
	}
}

// dirState is the data directory's own file: the id counters, and the
// actions of zones that were deleted (their sidecars went with them).
type dirState struct {
	NextZoneID   int64        `json:"next_zone_id"`
	NextActionID int64        `json:"next_action_id"`
	Deleted      []dns.Action `json:"deleted_zone_actions,omitempty"`
}

// readJSON decodes dir/name into v; a missing file leaves v as it is and
// reports found=false.
func readJSON(dir, name string, v any) (found bool, err error) {
	data, err := os.ReadFile(filepath.Join(dir, name))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading %s: %w", name, err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return false, fmt.Errorf("decoding %s: %w", name, err)
	}
	return true, nil
}

// writeJSON writes v to dir/name atomically, readable by the owner only
// (a secondary zone's TSIG key lives in its sidecar).
func writeJSON(dir, name string, v any, noSync bool) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding %s: %w", name, err)
	}
	return writeAtomic(dir, name, append(data, '\n'), 0o600, noSync)
}

// readState reads the directory state, starting the counters at 1.
func readState(dir string) (*dirState, error) {
	st := &dirState{NextZoneID: 1, NextActionID: 1}
	if _, err := readJSON(dir, stateFileName, st); err != nil {
		return nil, err
	}
	st.NextZoneID = max(st.NextZoneID, 1)
	st.NextActionID = max(st.NextActionID, 1)
	return st, nil
}
