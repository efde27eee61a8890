package localzone

import (
	mdns "github.com/miekg/dns"
)

// Bounds of a zone's journal, the differences IXFR serves (RFC 1995). It
// lives in memory: after a restart, or beyond the bounds, an IXFR is
// answered with the whole zone, as the RFC allows.
const (
	maxJournalChanges = 64
	maxJournalRecords = maxRecords
)

// change is one difference of a zone: the records deleted and added
// between two serials (SOA records not among them).
type change struct {
	from, to uint32
	del, add []mdns.RR
}

func (c change) size() int { return len(c.del) + len(c.add) }

// diff is the change from old to cur, by record text; ok is false when
// the serial did not change (a change the secondaries cannot see).
func diff(old, cur *zoneIndex) (change, bool) {
	os, cs := old.soa(), cur.soa()
	if os == nil || cs == nil || os.Serial == cs.Serial {
		return change{}, false
	}
	c := change{from: os.Serial, to: cs.Serial}
	have := make(map[string]int, len(old.all))
	for _, rr := range old.all {
		if rr.Header().Rrtype != mdns.TypeSOA {
			have[rr.String()]++
		}
	}
	for _, rr := range cur.all {
		if rr.Header().Rrtype == mdns.TypeSOA {
			continue
		}
		k := rr.String()
		if have[k] > 0 {
			have[k]--
			continue
		}
		c.add = append(c.add, rr)
	}
	for _, rr := range old.all {
		if k := rr.String(); rr.Header().Rrtype != mdns.TypeSOA && have[k] > 0 {
			have[k]--
			c.del = append(c.del, rr)
		}
	}
	return c, true
}

// appendChange is journal j with c added at its end, the oldest changes
// dropped past the bounds; j itself is not changed (snapshots share it).
// A change that does not start where the journal ends restarts it.
func appendChange(j []change, c change) []change {
	if n := len(j); n > 0 && j[n-1].to != c.from {
		j = nil
	}
	out := append(append(make([]change, 0, len(j)+1), j...), c)
	total := 0
	for i := len(out) - 1; i >= 0; i-- {
		total += out[i].size()
		if total > maxJournalRecords || len(out)-i > maxJournalChanges {
			return out[i+1:]
		}
	}
	return out
}

// since is the journal from serial on; ok is false when it does not reach
// back that far.
func since(j []change, serial uint32) ([]change, bool) {
	for i, c := range j {
		if c.from == serial {
			return j[i:], true
		}
	}
	return nil, false
}
