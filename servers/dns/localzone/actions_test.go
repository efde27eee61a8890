package localzone

import (
	"testing"
	"time"

	"github.com/bulwarkmcp/bulwark/servers/dns"
)

func TestActions(t *testing.T) {
	p, clk := newTestProvider(t, "")
	mustZone(t, p, "a.test")
	mustZone(t, p, "b.test")
	for i := range 3 {
		clk.set(clk.now().Add(time.Minute))
		if _, err := p.AddRecords(bg, "a.test", "r", "A", recs("192.0.2."+fmtInt(i+1)), nil); err != nil {
			t.Fatal(err)
		}
	}
	del, err := p.DeleteZone(bg, "b.test")
	if err != nil {
		t.Fatal(err)
	}
	all, err := p.ListActions(bg, dns.ListActionsOptions{})
	if err != nil || len(all.Actions) != 6 || *all.Pagination.TotalEntries != 6 {
		t.Fatalf("ListActions = %+v, %v", all, err)
	}
	for i, a := range all.Actions {
		if a.ID != int64(i+1) || a.Status != dns.ActionSuccess || a.Progress != 100 || a.Finished == nil || a.Started.IsZero() {
			t.Errorf("action %d = %+v", i, a)
		}
	}
	if all.Actions[5].ID != del.ID || all.Actions[5].Command != "delete_zone" {
		t.Errorf("delete action = %+v", all.Actions[5])
	}
	one, err := p.ListActions(bg, dns.ListActionsOptions{Zone: "a.test", Sort: []string{"id:desc"}, PerPage: 2})
	if err != nil || len(one.Actions) != 2 || one.Actions[0].ID != 5 || *one.Pagination.NextPage != 2 {
		t.Errorf("ListActions(a.test) = %+v, %v", one, err)
	}
	if l, _ := p.ListActions(bg, dns.ListActionsOptions{Status: []string{dns.ActionError}}); len(l.Actions) != 0 {
		t.Errorf("error actions = %+v", l.Actions)
	}
	if l, _ := p.ListActions(bg, dns.ListActionsOptions{Sort: []string{"command", "started:desc"}}); l.Actions[0].Command != "add_rrset_records" || l.Actions[0].ID != 5 {
		t.Errorf("sorted = %+v", l.Actions[0])
	}
	if a, err := p.GetAction(bg, 4); err != nil || a.Command != "add_rrset_records" {
		t.Errorf("GetAction(4) = %+v, %v", a, err)
	}
	wantCode(t, second(p.GetAction(bg, 99)), 404, "not_found")
	wantCode(t, second(p.ListActions(bg, dns.ListActionsOptions{Zone: "b.test"})), 404, "not_found")
	wantCode(t, second(p.ListActions(bg, dns.ListActionsOptions{Status: []string{"done"}})), 422, "invalid_input")
	wantCode(t, second(p.ListActions(bg, dns.ListActionsOptions{Sort: []string{"zone"}})), 422, "invalid_input")
}

func TestHistoryBounded(t *testing.T) {
	dir := t.TempDir()
	p, err := New(dir, &Options{HistoryLimit: 3, DisableSync: true})
	if err != nil {
		t.Fatal(err)
	}
	mustZone(t, p, "a.test")
	for i := range 5 {
		if _, err := p.AddRecords(bg, "a.test", "r", "A", recs("192.0.2."+fmtInt(i+1)), nil); err != nil {
			t.Fatal(err)
		}
	}
	l, _ := p.ListActions(bg, dns.ListActionsOptions{Zone: "a.test"})
	if len(l.Actions) != 3 || l.Actions[0].ID != 4 {
		t.Errorf("history = %+v", l.Actions)
	}
	// Ids keep counting after the history drops old actions.
	a, _ := p.AddRecords(bg, "a.test", "r", "A", recs("192.0.2.9"), nil)
	if a.ID != 7 {
		t.Errorf("next id = %d, want 7", a.ID)
	}
}

// TestSyncedWrites runs the default, fsyncing write path once.
func TestSyncedWrites(t *testing.T) {
	p, err := New(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	mustZone(t, p, "a.test")
	if _, err := p.AddRecords(bg, "a.test", "www", "A", recs("192.0.2.1"), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := p.DeleteZone(bg, "a.test"); err != nil {
		t.Fatal(err)
	}
}

func TestSelector(t *testing.T) {
	labels := map[string]string{"env": "prod", "tier": "web", "example.org/team": "dns", "empty": ""}
	cases := map[string]bool{
		"":                             true,
		"env":                          true,
		"!env":                         false,
		"!missing":                     true,
		"env=prod":                     true,
		"env==prod":                    true,
		"env!=prod":                    false,
		"missing!=x":                   true,
		"env in (dev, prod)":           true,
		"env notin (dev,prod)":         false,
		"missing notin (a)":            true,
		"missing in (a)":               false,
		"env=prod, tier=web":           true,
		"env=prod,tier=db":             false,
		"example.org/team=dns":         true,
		"empty=":                       true,
		"  env = prod ,  !missing  ":   true,
		"tier in (web),env notin (qa)": true,
	}
	for s, want := range cases {
		sel, err := parseSelector(s)
		if err != nil {
			t.Errorf("parseSelector(%q): %v", s, err)
			continue
		}
		if got := sel.matches(labels); got != want {
			t.Errorf("%q matches = %v, want %v", s, got, want)
		}
	}
	for _, bad := range []string{",", "a,", "=x", "!", "a in", "a in (", "a in (b", "a in b", "a notin", "a b", "a=b=c", "in", "a==", "!a=b", "a=(b)"} {
		if _, err := parseSelector(bad); err == nil && bad != "a==" {
			t.Errorf("parseSelector(%q) accepted", bad)
		}
	}
}
