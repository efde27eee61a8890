package hetzner

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/bulwarkmcp/bulwark/internal/fake/hetznerapi"
	"github.com/bulwarkmcp/bulwark/servers/dns"
)

// TestWireRequests pins method, escaped path, query and the exact body of
// every endpoint: the body is built only from declared fields.
func TestWireRequests(t *testing.T) {
	const z = "/v1/zones/example.com"
	rec := []dns.Record{{Value: "198.51.100.7", Comment: "web"}, {Value: "198.51.100.8"}}
	const recJSON = `[{"value":"198.51.100.7","comment":"web"},{"value":"198.51.100.8"}]`
	ns := []dns.PrimaryNameserver{{Address: "198.51.100.53", Port: 5353, TSIGKey: "a2V5", TSIGAlgorithm: "hmac-sha256"}}
	tests := []struct {
		name                      string
		call                      func(c *Client) error
		method, path, query, body string
	}{
		{"list_zones", func(c *Client) error {
			_, err := c.ListZones(t.Context(), dns.ListZonesOptions{Name: "example.com", Mode: "primary", LabelSelector: "env=prod,team in (a,b)", Sort: []string{"name:desc", "id"}, Page: 2, PerPage: 10})
			return err
		}, "GET", "/v1/zones", "label_selector=env%3Dprod%2Cteam+in+%28a%2Cb%29&mode=primary&name=example.com&page=2&per_page=10&sort=name%3Adesc&sort=id", ""},
		{"list_zones defaults", func(c *Client) error { _, err := c.ListZones(t.Context(), dns.ListZonesOptions{}); return err }, "GET", "/v1/zones", "", ""},
		{"get_zone", func(c *Client) error { _, err := c.GetZone(t.Context(), "example.com"); return err }, "GET", z, "", ""},
		{"create_zone full", func(c *Client) error {
			_, _, err := c.CreateZone(t.Context(), dns.CreateZoneRequest{Name: "example.net", Mode: "secondary", TTL: ptr(3600), Labels: map[string]string{"a": "b"}, PrimaryNameservers: ns, Zonefile: "x"})
			return err
		}, "POST", "/v1/zones", "", `{"name":"example.net","mode":"secondary","ttl":3600,"labels":{"a":"b"},"primary_nameservers":[{"address":"198.51.100.53","port":5353,"tsig_key":"a2V5","tsig_algorithm":"hmac-sha256"}],"zonefile":"x"}`},
		{"create_zone minimal", func(c *Client) error {
			_, _, err := c.CreateZone(t.Context(), dns.CreateZoneRequest{Name: "example.org", Mode: "primary"})
			return err
		}, "POST", "/v1/zones", "", `{"name":"example.org","mode":"primary"}`},
		{"update_zone", func(c *Client) error {
			_, err := c.UpdateZone(t.Context(), "example.com", map[string]string{"a": "b"})
			return err
		}, "PUT", z, "", `{"labels":{"a":"b"}}`},
		{"update_zone nil labels", func(c *Client) error { _, err := c.UpdateZone(t.Context(), "example.com", nil); return err }, "PUT", z, "", `{"labels":{}}`},
		{"get_zone_zonefile", func(c *Client) error { _, err := c.ExportZonefile(t.Context(), "example.com"); return err }, "GET", z + "/zonefile", "", ""},
		{"import_zone_zonefile", func(c *Client) error {
			_, err := c.ImportZonefile(t.Context(), "example.com", "$ORIGIN example.com.\n<tag>")
			return err
		}, "POST", z + "/actions/import_zonefile", "", `{"zonefile":"$ORIGIN example.com.\n<tag>"}`},
		{"change_zone_ttl", func(c *Client) error { _, err := c.ChangeZoneTTL(t.Context(), "example.com", 600); return err }, "POST", z + "/actions/change_ttl", "", `{"ttl":600}`},
		{"change_zone_protection false", func(c *Client) error { _, err := c.ChangeZoneProtection(t.Context(), "example.com", false); return err }, "POST", z + "/actions/change_protection", "", `{"delete":false}`},
		{"change_primary_nameservers", func(c *Client) error {
			_, err := c.ChangePrimaryNameservers(t.Context(), "example.com", []dns.PrimaryNameserver{{Address: "198.51.100.1"}})
			return err
		}, "POST", z + "/actions/change_primary_nameservers", "", `{"primary_nameservers":[{"address":"198.51.100.1"}]}`},
		{"change_primary_nameservers nil", func(c *Client) error {
			_, err := c.ChangePrimaryNameservers(t.Context(), "example.com", nil)
			return err
		},
			"POST", z + "/actions/change_primary_nameservers", "", `{"primary_nameservers":[]}`},
		{"delete_zone", func(c *Client) error { _, err := c.DeleteZone(t.Context(), "example.com"); return err }, "DELETE", z, "", ""},

		{"list_zone_rrsets", func(c *Client) error {
			_, err := c.ListRRSets(t.Context(), "example.com", dns.ListRRSetsOptions{Name: "www", Types: []string{"A", "AAAA"}, LabelSelector: "!x", Sort: []string{"name"}, Page: 1, PerPage: 100})
			return err
		}, "GET", z + "/rrsets", "label_selector=%21x&name=www&page=1&per_page=100&sort=name&type=A&type=AAAA", ""},
		{"get_zone_rrset apex", func(c *Client) error { _, err := c.GetRRSet(t.Context(), "example.com", "@", "MX"); return err }, "GET", z + "/rrsets/@/MX", "", ""},
		{"create_zone_rrset full", func(c *Client) error {
			_, _, err := c.CreateRRSet(t.Context(), "example.com", dns.CreateRRSetRequest{Name: "www", Type: "A", TTL: ptr(300), Labels: map[string]string{"a": "b"}, Records: rec})
			return err
		}, "POST", z + "/rrsets", "", `{"name":"www","type":"A","ttl":300,"labels":{"a":"b"},"records":` + recJSON + `}`},
		{"create_zone_rrset minimal", func(c *Client) error {
			_, _, err := c.CreateRRSet(t.Context(), "example.com", dns.CreateRRSetRequest{Name: "*", Type: "A"})
			return err
		}, "POST", z + "/rrsets", "", `{"name":"*","type":"A","records":[]}`},
		{"update_zone_rrset", func(c *Client) error {
			_, err := c.UpdateRRSet(t.Context(), "example.com", "*", "A", map[string]string{"a": "b"})
			return err
		}, "PUT", z + "/rrsets/*/A", "", `{"labels":{"a":"b"}}`},
		{"delete_zone_rrset", func(c *Client) error { _, err := c.DeleteRRSet(t.Context(), "example.com", "*.sub", "A"); return err }, "DELETE", z + "/rrsets/*.sub/A", "", ""},
		{"set_records", func(c *Client) error { _, err := c.SetRecords(t.Context(), "example.com", "www", "A", rec); return err },
			"POST", z + "/rrsets/www/A/actions/set_records", "", `{"records":` + recJSON + `}`},
		{"add_records ttl", func(c *Client) error {
			_, err := c.AddRecords(t.Context(), "example.com", "@", "TXT", rec[1:], ptr(600))
			return err
		},
			"POST", z + "/rrsets/@/TXT/actions/add_records", "", `{"records":[{"value":"198.51.100.8"}],"ttl":600}`},
		{"add_records no ttl", func(c *Client) error {
			_, err := c.AddRecords(t.Context(), "example.com", "www", "A", rec, nil)
			return err
		},
			"POST", z + "/rrsets/www/A/actions/add_records", "", `{"records":` + recJSON + `}`},
		{"remove_records", func(c *Client) error {
			_, err := c.RemoveRecords(t.Context(), "example.com", "www", "A", rec)
			return err
		},
			"POST", z + "/rrsets/www/A/actions/remove_records", "", `{"records":` + recJSON + `}`},
		{"update_records comment always sent", func(c *Client) error {
			_, err := c.UpdateRecords(t.Context(), "example.com", "www", "A", rec)
			return err
		},
			"POST", z + "/rrsets/www/A/actions/update_records", "", `{"records":[{"value":"198.51.100.7","comment":"web"},{"value":"198.51.100.8","comment":""}]}`},
		{"change_rrset_ttl null", func(c *Client) error {
			_, err := c.ChangeRRSetTTL(t.Context(), "example.com", "www", "A", nil)
			return err
		},
			"POST", z + "/rrsets/www/A/actions/change_ttl", "", `{"ttl":null}`},
		{"change_rrset_ttl value", func(c *Client) error {
			_, err := c.ChangeRRSetTTL(t.Context(), "example.com", "www", "A", ptr(60))
			return err
		},
			"POST", z + "/rrsets/www/A/actions/change_ttl", "", `{"ttl":60}`},
		{"change_rrset_protection", func(c *Client) error {
			_, err := c.ChangeRRSetProtection(t.Context(), "example.com", "www", "A", true)
			return err
		},
			"POST", z + "/rrsets/www/A/actions/change_protection", "", `{"change":true}`},

		{"list_zone_actions of a zone", func(c *Client) error {
			_, err := c.ListActions(t.Context(), dns.ListActionsOptions{Zone: "example.com", Status: []string{"running", "error"}, Sort: []string{"id"}, Page: 1, PerPage: 5})
			return err
		}, "GET", z + "/actions", "page=1&per_page=5&sort=id&status=running&status=error", ""},
		{"list_zone_actions all", func(c *Client) error { _, err := c.ListActions(t.Context(), dns.ListActionsOptions{}); return err }, "GET", "/v1/zones/actions", "", ""},
		{"get_zone_action", func(c *Client) error { _, err := c.GetAction(t.Context(), 42); return err }, "GET", "/v1/zones/actions/42", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake, c := startFake(t, nil)
			if _, err := fake.AddZone(hetznerapi.ZoneSeed{Name: "example.com"}); err != nil {
				t.Fatal(err)
			}
			fake.ResetRequests()
			err := tt.call(c)
			noToken(t, err)
			reqs := fake.Requests()
			if len(reqs) != 1 {
				t.Fatalf("%d requests reached the API, want 1 (err %v)", len(reqs), err)
			}
			r := reqs[0]
			if r.Method != tt.method || r.Path != tt.path || r.RawQuery != tt.query {
				t.Errorf("wire %s %s?%s, want %s %s?%s", r.Method, r.Path, r.RawQuery, tt.method, tt.path, tt.query)
			}
			if string(r.Body) != tt.body {
				t.Errorf("body\n got %s\nwant %s", r.Body, tt.body)
			}
			if r.Authorization() != "Bearer "+testToken || r.Header.Get("Accept") != "application/json" {
				t.Errorf("headers: authorization ok %v, accept %q", r.Authorization() == "Bearer "+testToken, r.Header.Get("Accept"))
			}
			if ct := r.Header.Get("Content-Type"); (tt.body != "") != (ct == "application/json") {
				t.Errorf("content-type %q with body %q", ct, tt.body)
			}
		})
	}
}

// TestUndeclaredFieldsNeverSent replays a hostile create_rrset tool call:
// the tool layer decodes arguments into typed structs, and the client builds
// the body from declared fields only, so "admin": true cannot reach the API.
func TestUndeclaredFieldsNeverSent(t *testing.T) {
	fake, c := startFake(t, nil)
	if _, err := fake.AddZone(hetznerapi.ZoneSeed{Name: "example.com"}); err != nil {
		t.Fatal(err)
	}
	args := `{"zone":"example.com","name":"www","type":"A","records":[{"value":"198.51.100.7","admin":true}],"admin":true,"id":"x/A","protection":{"change":true}}`
	var req dns.CreateRRSetRequest
	if err := json.Unmarshal([]byte(args), &req); err != nil {
		t.Fatal(err)
	}
	fake.ResetRequests()
	if _, _, err := c.CreateRRSet(t.Context(), "example.com", req); err != nil {
		t.Fatal(err)
	}
	r := fake.Requests()[0]
	if want := `{"name":"www","type":"A","records":[{"value":"198.51.100.7"}]}`; string(r.Body) != want {
		t.Fatalf("wire body %s, want %s", r.Body, want)
	}
	for _, f := range []string{"admin", "id", "protection", "zone"} {
		if r.HasField(f) {
			t.Errorf("field %q reached the API", f)
		}
	}
	if strings.Contains(string(r.Body), "admin") {
		t.Error("admin reached the API")
	}
}

// TestWirePathVerbatim checks the request line as an HTTP server sees it:
// "@" and "*" are never percent-encoded.
func TestWirePathVerbatim(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.RequestURI+" "+r.URL.EscapedPath())
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"rrset":{"id":"x"},"action":{"id":1}}`))
	}))
	defer srv.Close()
	c := newClient(t, srv.URL+"/v1", StaticToken(testToken), testHTTP())
	ctx := t.Context()
	for _, name := range []string{"@", "*", "*.sub", "_acme-challenge.www"} {
		if _, err := c.GetRRSet(ctx, "example.com", name, "TXT"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.AddRecords(ctx, "example.com", "@", "A", []dns.Record{{Value: "198.51.100.1"}}, nil); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"/v1/zones/example.com/rrsets/@/TXT /v1/zones/example.com/rrsets/@/TXT",
		"/v1/zones/example.com/rrsets/*/TXT /v1/zones/example.com/rrsets/*/TXT",
		"/v1/zones/example.com/rrsets/*.sub/TXT /v1/zones/example.com/rrsets/*.sub/TXT",
		"/v1/zones/example.com/rrsets/_acme-challenge.www/TXT /v1/zones/example.com/rrsets/_acme-challenge.www/TXT",
		"/v1/zones/example.com/rrsets/@/A/actions/add_records /v1/zones/example.com/rrsets/@/A/actions/add_records",
	}
	if strings.Join(seen, "\n") != strings.Join(want, "\n") {
		t.Fatalf("wire paths\n%s\nwant\n%s", strings.Join(seen, "\n"), strings.Join(want, "\n"))
	}
}

// TestWirePathAgainstFake: the fake matches on the escaped path, so "@" and
// "*" only find the RRSet when sent verbatim.
func TestWirePathAgainstFake(t *testing.T) {
	fake, c := startFake(t, nil)
	if _, err := fake.AddZone(hetznerapi.ZoneSeed{Name: "example.com"}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"*", "*.sub"} {
		if _, err := fake.AddRRSet("example.com", hetznerapi.RRSetSeed{Name: name, Type: "A", Records: []hetznerapi.Record{{Value: "198.51.100.1"}}}); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range []struct{ name, typ string }{{"@", "SOA"}, {"@", "NS"}, {"*", "A"}, {"*.sub", "A"}} {
		rr, err := c.GetRRSet(t.Context(), "example.com", n.name, n.typ)
		if err != nil || rr.Name != n.name {
			t.Errorf("GetRRSet(%s/%s) = %+v, %v", n.name, n.typ, rr, err)
		}
	}
}
