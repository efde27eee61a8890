package localzone

import (
	"errors"
	"testing"

	"github.com/bulwarkmcp/bulwark/servers/dns"
	mdns "github.com/miekg/dns"
)

// FuzzSelector: the parser never panics, and what it accepts it matches
// without panicking and parses again from its own input the same way.
func FuzzSelector(f *testing.F) {
	for _, s := range []string{"", "a", "!a", "a=b", "a==b", "a!=b", "a in (b,c)", "a notin (b)", "x/y=z, !w", "a in (", ",", "in"} {
		f.Add(s)
	}
	labels := map[string]string{"a": "b", "x/y": "z", "": ""}
	f.Fuzz(func(t *testing.T, s string) {
		sel, err := parseSelector(s)
		if err != nil {
			return
		}
		first := sel.matches(labels)
		again, err := parseSelector(s)
		if err != nil || again.matches(labels) != first {
			t.Fatalf("%q: not deterministic", s)
		}
	})
}

// FuzzImportZonefile runs zone files through the import pipeline of
// ImportZonefile (parseImport, the zone rules, rendering, reading the
// rendered file back) without the disk: no panic, every refusal a
// *dns.Error, and an accepted file renders to text that imports to the
// same text. TestImportFuzzSeedsOnDisk sends the seeds through the Provider.
func FuzzImportZonefile(f *testing.F) {
	for _, s := range importSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		first, err := importRender(text)
		if err != nil {
			var de *dns.Error
			if !errors.As(err, &de) {
				t.Fatalf("error %v (%T) is not a *dns.Error", err, err)
			}
			return
		}
		again, err := importRender(first)
		if err != nil {
			t.Fatalf("rendered zone does not import: %v\n%s", err, first)
		}
		if first != again {
			t.Fatalf("round trip differs:\n%s\n---\n%s", first, again)
		}
	})
}

var importSeeds = []string{
	importText,
	"$ORIGIN a.test.\n@ IN SOA localhost. h.a.test. 1 2 3 4 5\n@ IN NS localhost.\n",
	"$TTL 1h\n@ IN SOA localhost. h 1 2 3 4 5\n@ NS localhost.\nx 300 TXT \"a;b\" ; c\n",
	"$GENERATE 1-3 h$ A 192.0.2.$\n",
	"@ IN SOA localhost. h 1 2 3 4 5\n@ NS localhost.\n* AAAA ::1\n_s._tcp SRV 1 2 3 t.\n",
	"@ IN SOA localhost. h 1 2 3 4 5\n@ NS localhost.\n* A\n",
}

// importRender is ImportZonefile's pipeline for zone a.test in memory.
func importRender(text string) (string, error) {
	z, derr := parseImport(bg, text, "a.test", 3600, false)
	if derr != nil {
		return "", derr
	}
	if derr := checkZoneRules(z, []string{"localhost."}, "zonefile"); derr != nil {
		return "", derr
	}
	out := string(z.render())
	if _, err := parseZonefile(bg, out, "a.test", parseOptions{defaultTTL: fallbackTTL}); err != nil {
		return "", errInvalid("records", "the zone would not parse back: %v", err)
	}
	return out, nil
}

// TestImportFuzzSeedsOnDisk sends the import seeds through the Provider
// and checks export → import → export.
func TestImportFuzzSeedsOnDisk(t *testing.T) {
	p, _ := newTestProvider(t, "")
	mustZone(t, p, "a.test")
	for _, text := range importSeeds {
		if _, err := p.ImportZonefile(bg, "a.test", text); err != nil {
			var de *dns.Error
			if !errors.As(err, &de) {
				t.Fatalf("error %v is not a *dns.Error", err)
			}
			continue
		}
		first, _ := p.ExportZonefile(bg, "a.test")
		if _, err := p.ImportZonefile(bg, "a.test", first); err != nil {
			t.Fatalf("export does not import: %v\n%s", err, first)
		}
		if again, _ := p.ExportZonefile(bg, "a.test"); dropSerial(first) != dropSerial(again) {
			t.Fatalf("round trip differs:\n%s\n---\n%s", first, again)
		}
	}
}

// FuzzQuery hands random messages to the query handler: it never panics
// and its answer always packs.
func FuzzQuery(f *testing.F) {
	for _, q := range []struct {
		name string
		t    uint16
	}{{"www.example.test.", mdns.TypeA}, {"x.wild.example.test.", mdns.TypeTXT}, {"host.deleg.example.test.", mdns.TypeA},
		{"chain.example.test.", mdns.TypeA}, {"big.example.test.", mdns.TypeTXT}, {"example.test.", mdns.TypeANY}} {
		m := new(mdns.Msg)
		m.SetQuestion(q.name, q.t)
		m.SetEdns0(1232, true)
		b, _ := m.Pack()
		f.Add(b, true)
	}
	p := testZone(f)
	r := NewResponder(p, nil)
	s := r.refresh(true)
	f.Fuzz(func(t *testing.T, b []byte, udp bool) {
		req := new(mdns.Msg)
		if err := req.Unpack(b); err != nil {
			return
		}
		m := r.answer(s, req, udp)
		if _, err := m.Pack(); err != nil {
			t.Fatalf("answer does not pack: %v", err)
		}
	})
}
