package rfc2136

import (
	"strings"
	"testing"

	mdns "github.com/miekg/dns"
)

// FuzzTransfer feeds the records of a transfer answer, as a server might
// send them in any order, to the end detection, to fromAXFR and to an
// incremental apply on a base zone: no panic, and a state built is
// consistent (its record count is its records, its SOA the apex's).
func FuzzTransfer(f *testing.F) {
	soa := func(serial string) string {
		return "example.com. 300 IN SOA ns.example.com. h.example.com. " + serial + " 1 1 1 1\n"
	}
	f.Add(soa("2") + "www 300 IN A 192.0.2.1\n" + soa("2"))
	f.Add(soa("3") + soa("2") + "www 300 IN A 192.0.2.1\n" + soa("3") + "www 300 IN A 192.0.2.9\n" + soa("3"))
	f.Add(soa("3") + soa("2") + "gone 300 IN A 192.0.2.1\n" + soa("3") + soa("3"))
	f.Add(soa("2") + "other.org. 300 IN A 192.0.2.1\n" + soa("2"))
	f.Add(soa("2") + soa("5"))
	f.Fuzz(func(t *testing.T, text string) {
		if len(text) > 1<<14 {
			return
		}
		zp := mdns.NewZoneParser(strings.NewReader(text), "example.com.", "")
		zp.SetIncludeAllowed(false)
		var rrs []mdns.RR
		for rr, ok := zp.Next(); ok && len(rrs) < 200; rr, ok = zp.Next() {
			rrs = append(rrs, rr)
		}
		zc := &zoneConf{name: "example.com", origin: "example.com.", id: 1}
		end := xfrEnd{ixfr: true}
		n := 0
		for _, rr := range rrs {
			n++
			done, err := end.feed(rr)
			if err != nil || done {
				break
			}
		}
		rrs = rrs[:n]
		if len(rrs) < 2 {
			return
		}
		if _, ok := rrs[0].(*mdns.SOA); !ok {
			return
		}
		base, err := fromAXFR(zc, []mdns.RR{mustSOA(t, soa("2")), mustRR(t, "gone.example.com. 300 IN A 192.0.2.1"), mustSOA(t, soa("2"))})
		if err != nil {
			t.Fatal(err)
		}
		var st *zoneState
		if isIncremental(rrs) {
			st, _ = base.apply(rrs)
		} else {
			st, _ = fromAXFR(zc, rrs)
		}
		if st == nil {
			return
		}
		count := 0
		for _, s := range st.sets {
			count += len(s.rrs)
		}
		if count != st.records || st.soa == nil || base.records != 2 {
			t.Fatalf("inconsistent state: %d records counted, %d kept, soa %v; base %d", count, st.records, st.soa, base.records)
		}
	})
}

func mustRR(t *testing.T, s string) mdns.RR {
	rr, err := mdns.NewRR(s)
	if err != nil {
		t.Fatal(err)
	}
	return rr
}

func mustSOA(t *testing.T, s string) mdns.RR { return mustRR(t, s) }
