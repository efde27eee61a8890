package localzone

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bulwarkmcp/bulwark/servers/dns"
	"github.com/bulwarkmcp/bulwark/servers/dns/zonefile"
)

// zoneText is a zone file of zone with n A records (host00000 ...) whose
// last address octet is last, besides the SOA and NS.
func zoneText(zone string, n int, last int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "$ORIGIN %s.\n$TTL 3600\n@ IN SOA localhost. hostmaster.%s. 1 86400 10800 3600000 3600\n@ IN NS localhost.\n", zone, zone)
	for i := range n {
		fmt.Fprintf(&b, "host%05d IN A 10.%d.%d.%d ; record %d\n", i, i>>8&255, i&255, last, i)
	}
	return b.String()
}

// zoneOnDisk creates zone through p, then replaces its zone file with text
// (an editor's change: the sidecar stays).
func zoneOnDisk(t testing.TB, p *Provider, zone, text string) string {
	t.Helper()
	mustZone(t, p, zone)
	path := filepath.Join(p.Dir(), zoneFile(zone))
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func firstValue(t *testing.T, p *Provider, zone, name string) string {
	t.Helper()
	s, err := p.GetRRSet(bg, zone, name, "A")
	if err != nil {
		t.Fatalf("GetRRSet(%s): %v", name, err)
	}
	return s.Records[0].Value
}

// TestZoneParsedOnce: once a zone file is cached, no read parses it again
// (every read tool, by name and by id), and a change to it is parsed once.
func TestZoneParsedOnce(t *testing.T) {
	p, _ := newTestProvider(t, "")
	zoneOnDisk(t, p, "a.test", zoneText("a.test", 500, 1))
	mustZone(t, p, "b.test")
	if _, err := p.GetZone(bg, "a.test"); err != nil {
		t.Fatal(err)
	}
	before := zonefile.Parsed()
	reads := map[string]func() error{
		"get_zone":      func() error { return second(p.GetZone(bg, "a.test")) },
		"get_zone id":   func() error { return second(p.GetZone(bg, "1")) },
		"list_zones":    func() error { return second(p.ListZones(bg, dns.ListZonesOptions{})) },
		"list_rrsets 1": func() error { return second(p.ListRRSets(bg, "a.test", dns.ListRRSetsOptions{})) },
		"list_rrsets 9": func() error {
			return second(p.ListRRSets(bg, "1", dns.ListRRSetsOptions{Page: 9, Sort: []string{"name:desc"}}))
		},
		"get_rrset":    func() error { return second(p.GetRRSet(bg, "a.test", "host00007", "A")) },
		"export":       func() error { return second(p.ExportZonefile(bg, "a.test")) },
		"list_actions": func() error { return second(p.ListActions(bg, dns.ListActionsOptions{})) },
		"check_import": func() error { return p.CheckImport(bg, dns.Zone{ID: 2}, "") },
	}
	for name, read := range reads {
		for range 3 {
			if err := read(); err != nil && name != "check_import" {
				t.Fatalf("%s: %v", name, err)
			}
		}
		if n := zonefile.Parsed() - before; n != 0 {
			t.Fatalf("%s parsed %d records of cached zone files", name, n)
		}
	}
	// A write caches what it wrote: the next read parses nothing either.
	if _, err := p.AddRecords(bg, "a.test", "new", "A", recs("192.0.2.9"), nil); err != nil {
		t.Fatal(err)
	}
	before = zonefile.Parsed()
	if firstValue(t, p, "a.test", "new") != "192.0.2.9" || zonefile.Parsed() != before {
		t.Errorf("read after a write parsed %d records", zonefile.Parsed()-before)
	}
	// Listing actions and resolving an id read sidecars, not other zones.
	p.store.cache.drop("a.test")
	p.store.cache.drop("b.test")
	before = zonefile.Parsed()
	if _, err := p.ListActions(bg, dns.ListActionsOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.GetZone(bg, "2"); err != nil {
		t.Fatal(err)
	}
	if n := zonefile.Parsed() - before; n > 2 {
		t.Errorf("list_actions and get_zone of b.test by id parsed %d records (a.test has 500)", n)
	}
}

// TestCacheSeesExternalChanges: every way a file can change under the
// cache is seen by the next call: an edit in place of the same size with a
// new modification time, a rename over the file keeping its size and
// modification time, a restore of the version the cache once held, a
// deletion, and each of these to the sidecar.
func TestCacheSeesExternalChanges(t *testing.T) {
	p, _ := newTestProvider(t, "")
	path := zoneOnDisk(t, p, "a.test", zoneText("a.test", 20, 1))
	stamp := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	if err := os.Chtimes(path, stamp, stamp); err != nil {
		t.Fatal(err)
	}
	if got := firstValue(t, p, "a.test", "host00003"); got != "10.0.3.1" {
		t.Fatalf("value = %s", got)
	}

	// In place, same size, one nanosecond later.
	if err := os.WriteFile(path, []byte(zoneText("a.test", 20, 2)), 0o644); err != nil {
		t.Fatal(err)
	}
	stamp = stamp.Add(time.Nanosecond)
	if err := os.Chtimes(path, stamp, stamp); err != nil {
		t.Fatal(err)
	}
	if got := firstValue(t, p, "a.test", "host00003"); got != "10.0.3.2" {
		t.Errorf("after a same-size edit in place: %s, want 10.0.3.2", got)
	}

	// Renamed over, same size and modification time: only the inode differs.
	tmp := filepath.Join(p.Dir(), ".edit")
	if err := os.WriteFile(tmp, []byte(zoneText("a.test", 20, 3)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(tmp, stamp, stamp); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	if got := firstValue(t, p, "a.test", "host00003"); got != "10.0.3.3" {
		t.Errorf("after a rename over the file: %s, want 10.0.3.3", got)
	}

	// Deleted: gone for every call, by name and by id.
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	wantCode(t, second(p.GetZone(bg, "a.test")), 404, "not_found")
	wantCode(t, second(p.ListRRSets(bg, "1", dns.ListRRSetsOptions{})), 404, "not_found")
	if l, err := p.ListZones(bg, dns.ListZonesOptions{}); err != nil || len(l.Zones) != 0 {
		t.Errorf("ListZones after deletion = %+v, %v", l.Zones, err)
	}

	// Back again, with different records: read afresh.
	if err := os.WriteFile(path, []byte(zoneText("a.test", 5, 4)), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := firstValue(t, p, "a.test", "host00003"); got != "10.0.3.4" {
		t.Errorf("after the file came back: %s, want 10.0.3.4", got)
	}

	// The sidecar: labels changed in place with the same size, then by rename.
	meta := filepath.Join(p.Dir(), sidecarFile("a.test"))
	setLabel := func(v string, rename bool) {
		t.Helper()
		m, _, err := p.store.decodeMeta("a.test")
		if err != nil {
			t.Fatal(err)
		}
		m.Labels = map[string]string{"env": v}
		if rename {
			if err := writeJSON(p.Dir(), sidecarFile("a.test"), m, true); err != nil {
				t.Fatal(err)
			}
			return
		}
		fi, _ := os.Stat(meta)
		data, _ := jsonIndent(m)
		if err := os.WriteFile(meta, data, 0o600); err != nil {
			t.Fatal(err)
		}
		later := fi.ModTime().Add(time.Microsecond)
		if err := os.Chtimes(meta, later, later); err != nil {
			t.Fatal(err)
		}
	}
	for i, v := range []string{"aaaa", "bbbb", "cccc"} {
		setLabel(v, i == 2)
		z, err := p.GetZone(bg, "1")
		if err != nil || z.Labels["env"] != v {
			t.Errorf("labels after sidecar edit %d = %v, %v; want env=%s", i, z.Labels, err, v)
		}
		l, err := p.ListZones(bg, dns.ListZonesOptions{LabelSelector: "env=" + v})
		if err != nil || len(l.Zones) != 1 {
			t.Errorf("ListZones(env=%s) = %d zones, %v", v, len(l.Zones), err)
		}
	}

	// The sidecar deleted: the zone file is adopted afresh, with a new id.
	if err := os.Remove(meta); err != nil {
		t.Fatal(err)
	}
	z, err := p.GetZone(bg, "a.test")
	if err != nil || z.ID == 1 || len(z.Labels) != 0 {
		t.Errorf("after the sidecar was removed: %+v, %v", z, err)
	}
}

// TestNoStaleReadAfterWrite: a write through any Provider on the directory
// (this one, or another one as another process would be) is seen by the
// next read of every Provider, whatever they had cached.
func TestNoStaleReadAfterWrite(t *testing.T) {
	dir := t.TempDir()
	p1, _ := newTestProvider(t, dir)
	p2, _ := newTestProvider(t, dir)
	mustZone(t, p1, "a.test")
	for i := range 5 {
		v := fmt.Sprintf("192.0.2.%d", i+1)
		w, r := p1, p2
		if i%2 == 1 {
			w, r = p2, p1
		}
		if _, err := r.GetZone(bg, "a.test"); err != nil { // r caches the zone
			t.Fatal(err)
		}
		if _, err := w.AddRecords(bg, "a.test", "www", "A", recs(v), nil); err != nil {
			t.Fatal(err)
		}
		for _, p := range []*Provider{r, w} {
			s, err := p.GetRRSet(bg, "a.test", "www", "A")
			if err != nil || !slices.Contains(values(s), v) {
				t.Fatalf("round %d: %v, %v; want %s", i, values(s), err, v)
			}
		}
		if _, err := w.UpdateZone(bg, "a.test", map[string]string{"round": fmt.Sprint(i)}); err != nil {
			t.Fatal(err)
		}
		if z, _ := r.GetZone(bg, "a.test"); z.Labels["round"] != fmt.Sprint(i) {
			t.Fatalf("round %d: labels %v", i, z.Labels)
		}
	}
	// Deleted through one and created again through the other.
	if _, err := p2.DeleteZone(bg, "a.test"); err != nil {
		t.Fatal(err)
	}
	wantCode(t, second(p1.GetZone(bg, "a.test")), 404, "not_found")
	z := mustZone(t, p2, "a.test")
	got, err := p1.ListRRSets(bg, "a.test", dns.ListRRSetsOptions{})
	if err != nil || len(got.RRSets) != 2 || got.RRSets[0].Zone != z.ID {
		t.Errorf("after re-creation: %+v, %v", got, err)
	}
}

// TestCachedZoneCannotBeChanged: nothing a caller gets can reach the
// cached zone. Everything returned is changed in every way it can be, and
// a mutation that fails after it changed its copy leaves nothing behind.
func TestCachedZoneCannotBeChanged(t *testing.T) {
	p, _ := newTestProvider(t, "")
	mustZone(t, p, "a.test")
	ttl := 300
	if _, _, err := p.CreateRRSet(bg, "a.test", dns.CreateRRSetRequest{Name: "www", Type: "A", TTL: &ttl,
		Labels: map[string]string{"env": "prod"}, Records: recs("192.0.2.1")}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.UpdateZone(bg, "a.test", map[string]string{"team": "dns"}); err != nil {
		t.Fatal(err)
	}
	snapshot := func() string {
		z, err1 := p.GetZone(bg, "a.test")
		l, err2 := p.ListRRSets(bg, "a.test", dns.ListRRSetsOptions{})
		a, err3 := p.ListActions(bg, dns.ListActionsOptions{Zone: "a.test"})
		x, err4 := p.ExportZonefile(bg, "a.test")
		if err := errors.Join(err1, err2, err3, err4); err != nil {
			t.Fatal(err)
		}
		j, err := json.Marshal([]any{z, l, a, x})
		if err != nil {
			t.Fatal(err)
		}
		return string(j)
	}
	want := snapshot()
	vandalize := func() {
		z, _ := p.GetZone(bg, "a.test")
		z.Labels["team"] = "evil"
		z.AuthoritativeNameservers.Assigned[0] = "evil."
		s, _ := p.GetRRSet(bg, "a.test", "www", "A")
		s.Records[0].Value, *s.TTL, s.Labels["env"] = "6.6.6.6", 1, "evil"
		l, _ := p.ListRRSets(bg, "a.test", dns.ListRRSetsOptions{})
		for i := range l.RRSets {
			l.RRSets[i].Records[0].Value = "evil"
			if l.RRSets[i].TTL != nil {
				*l.RRSets[i].TTL = 1
			}
			l.RRSets[i].Labels["x"] = "evil"
		}
		for _, lst := range []dns.ActionList{
			first(p.ListActions(bg, dns.ListActionsOptions{Zone: "a.test"})),
			first(p.ListActions(bg, dns.ListActionsOptions{})),
		} {
			for i := range lst.Actions {
				a := &lst.Actions[i]
				a.Resources[0].ID, a.Command = 666, "evil"
				*a.Finished = time.Time{}
			}
		}
		act, _ := p.GetAction(bg, 1)
		act.Resources[0].ID = 666
		*act.Finished = time.Time{}
	}
	vandalize()
	if got := snapshot(); got != want {
		t.Errorf("the cache changed through returned values:\n got %s\nwant %s", got, want)
	}
	// A CNAME beside an A record breaks a zone rule after the mutation
	// added it to its copy of the RRSet.
	_, err := p.AddRecords(bg, "a.test", "www", "CNAME", recs("other.example."), nil)
	wantCode(t, err, 422, "invalid_input")
	_, err = p.AddRecords(bg, "a.test", "@", "CNAME", recs("other.example."), nil)
	wantCode(t, err, 422, "invalid_input")
	if got := snapshot(); got != want {
		t.Errorf("a failed mutation changed the cache:\n got %s\nwant %s", got, want)
	}
}

func first[T any](v T, _ error) T { return v }

func jsonIndent(v any) ([]byte, error) {
	data, err := json.MarshalIndent(v, "", "  ")
	return append(data, '\n'), err
}

// TestListRRSetsSortsOncePerVersion: paging through a cached zone sorts
// it once per order; a change sorts the new version once; and every page,
// every order and every filter gives what sorting and filtering all the
// RRSets gives (the previous implementation, kept here as the reference).
func TestListRRSetsSortsOncePerVersion(t *testing.T) {
	p, _ := newTestProvider(t, "")
	zoneOnDisk(t, p, "a.test", zoneText("a.test", 230, 1))
	for i, n := range []string{"host00001", "host00002", "a-b", "a"} {
		if _, err := p.AddRecords(bg, "a.test", n, "TXT", recs(`"t"`), nil); err != nil {
			t.Fatal(err)
		}
		if _, err := p.UpdateRRSet(bg, "a.test", n, "TXT", map[string]string{"env": []string{"prod", "dev"}[i%2]}); err != nil {
			t.Fatal(err)
		}
	}
	s0 := sorts.Load()
	for page := 1; page <= 12; page++ {
		if _, err := p.ListRRSets(bg, "a.test", dns.ListRRSetsOptions{Page: page, PerPage: 20, Sort: []string{"name:desc"}}); err != nil {
			t.Fatal(err)
		}
	}
	if n := sorts.Load() - s0; n != 1 {
		t.Errorf("12 pages sorted the zone %d times, want 1", n)
	}
	if _, err := p.AddRecords(bg, "a.test", "late", "A", recs("192.0.2.1"), nil); err != nil {
		t.Fatal(err)
	}
	s0 = sorts.Load()
	for page := 1; page <= 3; page++ {
		_, _ = p.ListRRSets(bg, "a.test", dns.ListRRSetsOptions{Page: page, PerPage: 100})
	}
	if n := sorts.Load() - s0; n != 1 {
		t.Errorf("3 pages after a change sorted %d times, want 1", n)
	}

	e, err := p.entry(bg, "a.test")
	if err != nil {
		t.Fatal(err)
	}
	sortsSpecs := [][]string{nil, {"id"}, {"id:desc"}, {"name"}, {"name:desc"}, {"name", "id:desc"},
		{"name:desc", "id:desc"}, {"name:asc", "name:desc"}, {"id:desc", "name"}}
	filters := []dns.ListRRSetsOptions{{}, {Name: "a"}, {Types: []string{"TXT"}}, {LabelSelector: "env=prod"},
		{LabelSelector: "env!=prod", Types: []string{"TXT", "A"}}, {Name: "nothing"}}
	for _, sortSpec := range sortsSpecs {
		for _, f := range filters {
			for _, pp := range [][2]int{{0, 0}, {1, 7}, {3, 7}, {34, 7}, {35, 7}, {99, 7}, {2, 100}} {
				opts := f
				opts.Sort, opts.Page, opts.PerPage = sortSpec, pp[0], pp[1]
				got, err := p.ListRRSets(bg, "a.test", opts)
				if err != nil {
					t.Fatal(err)
				}
				want := referenceList(t, e, opts)
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("ListRRSets(%+v):\n got %+v\nwant %+v", opts, got, want)
				}
			}
		}
	}
}

// referenceList is ListRRSets as it was: a view of every RRSet, filtered,
// sorted, then paged.
func referenceList(t testing.TB, e *zoneEntry, opts dns.ListRRSetsOptions) dns.RRSetList {
	sel, _ := parseSelector(opts.LabelSelector)
	keys, _ := parseSort(opts.Sort, "id", "name")
	sets := []dns.RRSet{}
	for _, s := range e.data.sets {
		if (opts.Name == "" || s.name == opts.Name) && (len(opts.Types) == 0 || slices.Contains(opts.Types, s.typ)) {
			if v := rrsetView(e, s); sel.matches(v.Labels) {
				sets = append(sets, v)
			}
		}
	}
	sortBy(sets, keys, "id", func(field string, a, b dns.RRSet) int {
		if field == "name" {
			return strings.Compare(a.Name, b.Name)
		}
		return strings.Compare(a.ID, b.ID)
	})
	page, pg, derr := paginate(sets, opts.Page, opts.PerPage, maxPerPageSets)
	if derr != nil {
		t.Fatal(derr)
	}
	if page == nil {
		page = []dns.RRSet{}
	}
	return dns.RRSetList{RRSets: page, Pagination: pg}
}

// TestCacheConcurrency: readers paging and listing, writers changing
// records, and an editor renaming new versions over a zone file, all at
// once (run it with -race). Every page is whole and in order, and every
// write is seen by the reads after it.
func TestCacheConcurrency(t *testing.T) {
	dir := t.TempDir()
	p, _ := newTestProvider(t, dir)
	other, _ := newTestProvider(t, dir)
	zoneOnDisk(t, p, "edited.test", zoneText("edited.test", 300, 1))
	mustZone(t, p, "written.test")
	ctx, cancel := context.WithTimeout(bg, 30*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	report := func(err error) {
		if err != nil {
			select {
			case errs <- err:
			default:
			}
		}
	}
	const rounds = 30
	for w := range 2 {
		wg.Go(func() {
			pp := []*Provider{p, other}[w]
			for i := range rounds {
				name := fmt.Sprintf("w%d-%d", w, i)
				if _, err := pp.AddRecords(ctx, "written.test", name, "A", recs("192.0.2.1"), nil); err != nil {
					report(err)
					return
				}
				if _, err := pp.GetRRSet(ctx, "written.test", name, "A"); err != nil {
					report(fmt.Errorf("own write not seen: %w", err))
				}
			}
		})
	}
	wg.Go(func() {
		for i := range rounds {
			tmp := filepath.Join(dir, ".edit-tmp")
			if err := os.WriteFile(tmp, []byte(zoneText("edited.test", 300, i%200)), 0o644); err != nil {
				report(err)
				return
			}
			report(os.Rename(tmp, filepath.Join(dir, zoneFile("edited.test"))))
			time.Sleep(time.Millisecond)
		}
	})
	for r := range 4 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(r), 1))
			for range rounds * 2 {
				pp := []*Provider{p, other}[rng.IntN(2)]
				page := 1 + rng.IntN(4)
				l, err := pp.ListRRSets(ctx, "edited.test", dns.ListRRSetsOptions{Page: page, PerPage: 100, Sort: []string{"name"}})
				if err != nil {
					report(err)
					return
				}
				if page <= 3 && len(l.RRSets) != 100 || page == 4 && len(l.RRSets) != 2 || *l.Pagination.TotalEntries != 302 {
					report(fmt.Errorf("page %d: %d rrsets of %d", page, len(l.RRSets), *l.Pagination.TotalEntries))
				}
				if !slices.IsSortedFunc(l.RRSets, func(a, b dns.RRSet) int { return strings.Compare(a.Name, b.Name) }) {
					report(errors.New("page out of order"))
				}
				octet := func(v string) string { return v[strings.LastIndexByte(v, '.')+1:] }
				last := l.RRSets[len(l.RRSets)-1].Records[0].Value
				for _, s := range l.RRSets {
					if s.Type == "A" && octet(s.Records[0].Value) != octet(last) {
						report(fmt.Errorf("one page mixes versions: %s and %s", s.Records[0].Value, last))
						break
					}
				}
				if _, err := pp.ListZones(ctx, dns.ListZonesOptions{}); err != nil {
					report(err)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	l, err := p.ListRRSets(bg, "written.test", dns.ListRRSetsOptions{PerPage: 100})
	if err != nil || *l.Pagination.TotalEntries != 2+2*rounds {
		t.Errorf("written.test holds %v rrsets (%v), want %d", l.Pagination.TotalEntries, err, 2+2*rounds)
	}
}
