package hetznerapi

import (
	"fmt"
	"testing"
)

func addRecord(t *testing.T, s *Server, name string) resp {
	t.Helper()
	return do(t, s, "POST", zpath+"/rrsets/"+name+"/A/actions/add_records", map[string]any{"records": recs("192.0.2.1")})
}

func TestActionLifecycle(t *testing.T) {
	s, z := newPrimary(t, nil)
	r := addRecord(t, s, "www")
	want(t, r, 201, "")
	id := fmt.Sprint(r.num("action.id"))
	if g := do(t, s, "GET", zpath, nil); g.str("zone.status") != "updating" {
		t.Errorf("zone status while running: %s", g.str("zone.status"))
	}
	g := do(t, s, "GET", "/zones/actions/"+id, nil)
	want(t, g, 200, "")
	if g.str("action.status") != StatusSuccess || g.num("action.progress") != 100 || g.get("action.finished") == nil ||
		g.get("action.error") != nil || g.str("action.command") != "add_rrset_records" {
		t.Errorf("after one poll %s", g.raw)
	}
	if g := do(t, s, "GET", zpath, nil); g.str("zone.status") != "ok" {
		t.Errorf("zone status after: %s", g.str("zone.status"))
	}
	want(t, do(t, s, "GET", fmt.Sprintf("/zones/%d/actions/%s", z.ID, id), nil), 200, "")
	want(t, do(t, s, "GET", "/zones/actions/999", nil), 404, CodeNotFound)
	want(t, do(t, s, "GET", "/zones/actions/x", nil), 404, CodeNotFound)
	if _, err := s.AddZone(ZoneSeed{Name: "other.com"}); err != nil {
		t.Fatal(err)
	}
	want(t, do(t, s, "GET", "/zones/other.com/actions/"+id, nil), 404, CodeNotFound)
}

func TestActionPolls(t *testing.T) {
	s, _ := newPrimary(t, &Options{ActionPolls: 3})
	id := fmt.Sprint(addRecord(t, s, "www").num("action.id"))
	for i, st := range []string{StatusRunning, StatusRunning, StatusSuccess, StatusSuccess} {
		if got := do(t, s, "GET", "/zones/actions/"+id, nil).str("action.status"); got != st {
			t.Errorf("poll %d: %s, want %s", i+1, got, st)
		}
	}
}

func TestManualActions(t *testing.T) {
	s, _ := newPrimary(t, &Options{ManualActions: true})
	id := fmt.Sprint(addRecord(t, s, "a").num("action.id"))
	addRecord(t, s, "b")
	for range 3 {
		if got := do(t, s, "GET", "/zones/actions/"+id, nil).str("action.status"); got != StatusRunning {
			t.Fatalf("manual action finished by polling: %s", got)
		}
	}
	if n := s.CompleteActions(); n != 2 {
		t.Errorf("completed %d", n)
	}
	if got := do(t, s, "GET", "/zones/actions/"+id, nil).str("action.status"); got != StatusSuccess {
		t.Errorf("status %s", got)
	}
}

func TestScriptedOutcomes(t *testing.T) {
	s, _ := newPrimary(t, nil)
	s.FailNextAction("server_error", "boom")
	r := addRecord(t, s, "failed")
	want(t, r, 201, "")
	g := do(t, s, "GET", "/zones/actions/"+fmt.Sprint(r.num("action.id")), nil)
	if g.str("action.status") != StatusError || g.str("action.error.code") != "server_error" ||
		g.str("action.error.message") != "boom" {
		t.Errorf("failed action %s", g.raw)
	}
	if _, ok := s.RRSet("example.com", "failed", "A"); ok {
		t.Error("a failed action must not change state")
	}
	s.ScriptActions(ActionOutcome{Stay: true})
	r = addRecord(t, s, "stays")
	id := r.num("action.id")
	do(t, s, "GET", "/zones/actions/"+fmt.Sprint(id), nil)
	if !s.FinishAction(int64(id)) || s.FinishAction(int64(id)) {
		t.Error("FinishAction must finish a running action exactly once")
	}
}

func TestLockWhileRunning(t *testing.T) {
	s, _ := newPrimary(t, &Options{LockWhileRunning: true})
	id := fmt.Sprint(addRecord(t, s, "a").num("action.id"))
	want(t, addRecord(t, s, "b"), 423, CodeLocked)
	want(t, do(t, s, "DELETE", zpath, nil), 423, CodeLocked)
	do(t, s, "GET", "/zones/actions/"+id, nil)
	want(t, addRecord(t, s, "b"), 201, "")
}

func TestListActions(t *testing.T) {
	s, z := newPrimary(t, nil)
	if _, err := s.AddZone(ZoneSeed{Name: "other.com"}); err != nil {
		t.Fatal(err)
	}
	first := addRecord(t, s, "a").num("action.id")
	do(t, s, "GET", "/zones/actions/"+fmt.Sprint(first), nil)
	addRecord(t, s, "b")
	do(t, s, "POST", "/zones/other.com/actions/change_protection", map[string]any{"delete": true})
	cases := []struct {
		path  string
		count int
	}{
		{"/zones/actions", 3},
		{"/zones/actions?status=running", 2},
		{"/zones/actions?status=success&status=running", 3},
		{fmt.Sprintf("/zones/%d/actions", z.ID), 2},
		{"/zones/example.com/actions?status=running", 1},
		{"/zones/other.com/actions", 1},
		{"/zones/actions?sort=command:desc&per_page=1", 1},
		{fmt.Sprintf("/actions?id=%d", first), 1},
	}
	for _, c := range cases {
		r := do(t, s, "GET", c.path, nil)
		want(t, r, 200, "")
		if n := len(r.get("actions").([]any)); n != c.count || r.num("meta.pagination.total_entries") < n {
			t.Errorf("%s: %d actions, want %d: %s", c.path, n, c.count, r.raw)
		}
	}
	if r := do(t, s, "GET", "/zones/actions?sort=command:desc&per_page=1", nil); r.str("meta.pagination.per_page") != "" ||
		r.get("actions").([]any)[0].(map[string]any)["command"] != "change_protection" {
		t.Errorf("sort by command desc: %s", r.raw)
	}
	want(t, do(t, s, "GET", "/actions", nil), 422, CodeInvalidInput)
	want(t, do(t, s, "GET", "/zones/actions?status=done", nil), 422, CodeInvalidInput)
	want(t, do(t, s, "GET", "/zones/actions?id=x", nil), 422, CodeInvalidInput)
	// A list with an id filter counts as a poll, the way hcloud-go waits.
	second := do(t, s, "GET", "/zones/actions?status=running&sort=id", nil).get("actions").([]any)[0].(map[string]any)
	r := do(t, s, "GET", fmt.Sprintf("/zones/actions?id=%d", int(second["id"].(float64))), nil)
	if r.get("actions").([]any)[0].(map[string]any)["status"] != StatusSuccess {
		t.Errorf("id-filtered list did not poll: %s", r.raw)
	}
}
