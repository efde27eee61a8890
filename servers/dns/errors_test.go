package dns_test

import (
	"context"
	"testing"
	"time"

	"github.com/bulwarkmcp/bulwark/internal/fake/hetznerapi"
	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/servers/dns"
	"github.com/bulwarkmcp/bulwark/servers/dns/hetzner"
)

// The documented errors, on every provider: each becomes a tool error with
// our own message and hint, the provider's text only inside the envelope.

func TestNotFound(t *testing.T) {
	forEach(t, func(t *testing.T, mk backendMaker) {
		f := newFixture(t, mk, setup{before: standard(t)})
		text := f.fails(t, "get_zone", map[string]any{"zone": "missing.example"}, kernel.NotFound)
		contains(t, text, `The provider found no zone "missing.example".`, "list_zones")
		f.fails(t, "get_rrset", rrsetArgs("example.com", "nope", "A"), kernel.NotFound)
		f.fails(t, "delete_rrset", rrsetArgs("example.com", "nope", "A"), kernel.NotFound)
		f.fails(t, "set_records", rrsetArgs("example.com", "nope", "A", "records", recs("198.51.100.1")), kernel.NotFound)
		f.fails(t, "get_zone_action", map[string]any{"action_id": 987654321}, kernel.NotFound)
		f.fails(t, "list_rrsets", map[string]any{"zone": "99999999"}, kernel.NotFound)
		f.fails(t, "delete_zone", map[string]any{"zone": "missing.example"}, kernel.NotFound)
	})
}

func TestProtected(t *testing.T) {
	forEach(t, func(t *testing.T, mk backendMaker) {
		f := newFixture(t, mk, setup{before: func(b backend) {
			standard(t)(b)
			protectRRSet(t, b, "example.com", "www", "A")
			protectZone(t, b, "example.com")
		}})
		// No token is issued for a call that cannot run: the first call
		// is refused with the error itself.
		www := rrsetArgs("example.com", "www", "A")
		text := f.fails(t, "delete_rrset", www, kernel.FailedPrecondition)
		contains(t, text, `The RRSet "www/A" of zone "example.com" is protected`, "change_rrset_protection")
		text = f.fails(t, "add_records", with(www, "records", recs("198.51.100.9")), kernel.FailedPrecondition)
		contains(t, text, "change_rrset_protection")

		zf, err := f.p.ExportZonefile(ctx(), "example.com")
		if err != nil {
			t.Fatal(err)
		}
		imp := map[string]any{"zone": "example.com", "zonefile": zf}
		text = f.fails(t, "import_zonefile", imp, kernel.FailedPrecondition)
		contains(t, text, "change_rrset_protection")

		text = f.fails(t, "delete_zone", map[string]any{"zone": "example.com"}, kernel.FailedPrecondition)
		contains(t, text, "change_zone_protection")
		getZone(t, f, "example.com")
	})
}

func TestAlreadyExists(t *testing.T) {
	forEach(t, func(t *testing.T, mk backendMaker) {
		f := newFixture(t, mk, setup{before: standard(t)})
		text := f.fails(t, "create_rrset", rrsetArgs("example.com", "www", "A", "records", recs("198.51.100.9")), kernel.AlreadyExists)
		contains(t, text, "add_records or set_records")
		f.fails(t, "create_zone", map[string]any{"name": "example.com", "mode": "primary"}, kernel.AlreadyExists)
	})
}

func TestProviderRejectsInput(t *testing.T) {
	forEach(t, func(t *testing.T, mk backendMaker) {
		f := newFixture(t, mk, setup{before: standard(t)})
		// The name must be relative to the zone: only the provider knows.
		text := f.fails(t, "create_rrset", rrsetArgs("example.com", "www.example.com", "A", "records", recs("198.51.100.9")), kernel.InvalidArgument)
		contains(t, text, "The provider rejected the arguments", "The upstream said:", "<untrusted-data", "name")
		f.fails(t, "create_zone", map[string]any{"name": "example.com", "mode": "secondary"}, kernel.InvalidArgument) // no primaries
	})
}

func TestIncorrectZoneMode(t *testing.T) {
	forEach(t, func(t *testing.T, mk backendMaker) {
		f := newFixture(t, mk, setup{before: func(b backend) { seedZone(t, b, "example.com"); seedSecondary(t, b, "example.net") }})
		text := f.fails(t, "list_rrsets", map[string]any{"zone": "example.net"}, kernel.FailedPrecondition)
		contains(t, text, "primary or secondary", "get_zone shows the mode")
		f.fails(t, "export_zonefile", map[string]any{"zone": "example.net"}, kernel.FailedPrecondition)
		f.fails(t, "change_zone_ttl", map[string]any{"zone": "example.net", "ttl": 600}, kernel.FailedPrecondition)
		ns := map[string]any{"zone": "example.com", "primary_nameservers": []any{map[string]any{"address": "198.51.100.5"}}}
		f.fails(t, "change_primary_nameservers", ns, kernel.FailedPrecondition) // no token first
		imp := map[string]any{"zone": "example.net", "zonefile": "@ IN SOA a. b. 1 2 3 4 5\n"}
		f.fails(t, "import_zonefile", imp, kernel.FailedPrecondition)
	})
}

// Our own validation, before any request: schema rules and the handlers'.
func TestArgumentValidation(t *testing.T) {
	forEach(t, func(t *testing.T, mk backendMaker) {
		f := newFixture(t, mk, setup{before: standard(t)})
		if f.fake != nil {
			f.fake.ResetRequests()
		}
		cases := []struct {
			tool string
			args map[string]any
			want string
		}{
			{"get_zone", map[string]any{"zone": ".."}, `"zone"`},
			{"get_zone", map[string]any{"zone": "."}, `"zone"`},
			{"get_zone", map[string]any{"zone": "a/b"}, `"zone"`},
			{"get_zone", map[string]any{"zone": "example.com%2F"}, `"zone"`},
			{"get_zone", map[string]any{"zone": ""}, `"zone"`},
			{"get_rrset", rrsetArgs("example.com", "..", "A"), `"name"`},
			{"get_rrset", rrsetArgs("example.com", "a b", "A"), `"name"`},
			{"get_rrset", rrsetArgs("example.com", "www", "XYZ"), `"type"`},
			{"create_rrset", rrsetArgs("example.com", "x", "A", "records", []any{}), `"records"`},
			{"create_rrset", rrsetArgs("example.com", "x", "A", "records", recs("")), `"records[].value"`},
			{"create_rrset", rrsetArgs("example.com", "x", "A", "records", recs("198.51.100.9"), "ttl", 59), `"ttl"`},
			{"create_rrset", rrsetArgs("example.com", "x", "A", "records", recs("198.51.100.9"), "admin", true), `admin`},
			{"change_zone_ttl", map[string]any{"zone": "example.com", "ttl": 2147483648}, `"ttl"`},
			{"list_zones", map[string]any{"per_page": 51}, `"per_page"`},
			{"list_zones", map[string]any{"page": 0}, `"page"`},
			{"list_zones", map[string]any{"sort": []any{"created:sideways"}}, `"sort`},
			{"list_rrsets", map[string]any{"zone": "example.com", "sort": []any{"created"}}, `"sort`},
			{"list_zone_actions", map[string]any{"status": []any{"done"}}, `"status`},
			{"get_zone_action", map[string]any{"action_id": 0}, `"action_id"`},
			{"create_zone", map[string]any{"name": "example.org", "mode": "tertiary"}, `"mode"`},
			{"change_primary_nameservers", map[string]any{"zone": "example.net", "primary_nameservers": []any{map[string]any{"address": "198.51.100.5", "port": 70000}}}, `port`},
			{"change_primary_nameservers", map[string]any{"zone": "example.net", "primary_nameservers": []any{}}, `"primary_nameservers"`},
			{"import_zonefile", map[string]any{"zone": "example.com", "zonefile": ""}, `"zonefile"`},
		}
		for _, c := range cases {
			text := f.fails(t, c.tool, c.args, kernel.InvalidArgument)
			contains(t, text, c.want)
		}
		if f.fake != nil {
			if n := len(f.fake.Requests()); n != 0 {
				t.Fatalf("invalid arguments reached the API: %d requests", n)
			}
		}
	})
}

func hetznerOnly(t *testing.T) backendMaker {
	t.Helper()
	return backends[0]
}

func TestReadOnlyToken(t *testing.T) {
	f := newFixture(t, hetznerOnly(t), setup{before: standard(t), client: func(b backend) dns.Provider {
		return hetznerClient(t, b.fake, roToken, time.Second)
	}})
	f.ok(t, "get_zone", map[string]any{"zone": "example.com"}, nil)
	text := f.fails(t, "add_records", rrsetArgs("example.com", "www", "A", "records", recs("198.51.100.9")), kernel.PermissionDenied)
	contains(t, text, "this API token is read-only; use a Read & Write token or run with HETZNER_READ_ONLY=true")
	lacks(t, text, roToken)
}

func TestUnauthorized(t *testing.T) {
	f := newFixture(t, hetznerOnly(t), setup{before: standard(t), client: func(b backend) dns.Provider {
		return hetznerClient(t, b.fake, "hzWRONG-token-000000000000000000000000000000000000000000000000", time.Second)
	}})
	text := f.fails(t, "get_zone", map[string]any{"zone": "example.com"}, kernel.Unauthenticated)
	contains(t, text, "HETZNER_API_TOKEN")
	lacks(t, text, "hzWRONG")
}

// A *kernel.Error from below the provider (the missing-credential refusal)
// passes through unchanged.
func TestMissingCredentialsPassThrough(t *testing.T) {
	f := newFixture(t, hetznerOnly(t), setup{
		kopts: kernel.Options{Credentials: []kernel.Credential{{Name: "hetzner", Provider: "Hetzner"}}},
		client: func(b backend) dns.Provider {
			c, err := hetzner.New(b.fake.URL(), func(ctx context.Context) (string, error) { return kernel.CredentialFrom(ctx, "hetzner") }, nil)
			if err != nil {
				t.Fatal(err)
			}
			return c
		},
	})
	text := f.fails(t, "list_zones", map[string]any{}, kernel.Unauthenticated)
	contains(t, text, "Missing Hetzner credentials")
}

func TestRateLimited(t *testing.T) {
	f := newFixture(t, hetznerOnly(t), setup{before: standard(t)})
	f.fake.RateLimitNext(20, time.Now().Add(42*time.Second))
	text := f.fails(t, "get_zone", map[string]any{"zone": "example.com"}, kernel.RateLimited)
	contains(t, text, "Retry after ", "not executed")
}

func TestUpstreamUnavailable(t *testing.T) {
	f := newFixture(t, hetznerOnly(t), setup{before: standard(t)})
	f.fake.FailNext(20, "unavailable", "service unavailable "+marker)
	text := f.fails(t, "get_zone", map[string]any{"zone": "example.com"}, kernel.UpstreamUnavailable)
	contains(t, text, "<untrusted-data")
	f.fake.ClearFaults()
	f.fake.FailNext(1, "server_error", "boom")
	f.fails(t, "add_records", rrsetArgs("example.com", "www", "A", "records", recs("198.51.100.9")), kernel.UpstreamError)
}

func TestLocked(t *testing.T) {
	f := newFixture(t, hetznerOnly(t), setup{before: standard(t), hopts: &hetznerapi.Options{LockWhileRunning: true},
		cfg: dns.Config{ActionWait: time.Second, ActionPoll: 100 * time.Millisecond}})
	f.fake.ScriptActions(hetznerapi.ActionOutcome{Stay: true})
	f.ok(t, "add_records", rrsetArgs("example.com", "www", "A", "records", recs("198.51.100.9")), nil)
	text := f.fails(t, "add_records", rrsetArgs("example.com", "www", "A", "records", recs("198.51.100.10")), kernel.Conflict)
	contains(t, text, "retry in a few seconds")
}
