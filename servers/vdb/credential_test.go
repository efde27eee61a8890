package vdb_test

import (
	"strings"
	"testing"

	"github.com/bulwarkmcp/bulwark/internal/fake/vdbapi"
	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/mcptest"
)

// TestNoCredentialNoAccess: with no credential every data tool answers
// unauthenticated, naming every way to sign in, and nothing is sent
// upstream (no anonymous mode, no built-in credential).
func TestNoCredentialNoAccess(t *testing.T) {
	f := newFixture(t, setup{noKey: true})
	for _, tc := range toolCalls {
		text := f.fails(t, tc.tool, tc.args, kernel.Unauthenticated)
		contains(t, text, "VULNETIX_API_KEY", "X-Vulnetix-Authorization: ApiKey", "vdb_auth_start")
	}
	f.fails(t, "vdb_request", map[string]any{"path": "/ecosystems"}, kernel.Unauthenticated)
	if n := f.apiCalls(); n != 0 {
		t.Fatalf("%d upstream requests without a credential", n)
	}
}

// TestCredentialForms: the console's "<org>:<hex>", an explicit ApiKey, a
// doubled org prefix (stripped, as the CLI does) and a Bearer token all
// reach the API as the scheme they are.
func TestCredentialForms(t *testing.T) {
	probe := newFixture(t, setup{})
	key := probe.key
	for _, tc := range []struct{ name, cred, scheme string }{
		{"console form", key, "ApiKey"},
		{"explicit ApiKey", "ApiKey " + key, "ApiKey"},
		{"doubled org prefix", vdbapi.OrgA + ":" + key, "ApiKey"},
		{"bearer", "Bearer tok-0123456789abcdef", "Bearer"},
		{"bare token", "tok-0123456789abcdef", "Bearer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, setup{credential: tc.cred})
			f.fake.AddKey(vdbapi.OrgA, "secret-a")
			f.fake.AddBearer(vdbapi.OrgA, "tok-0123456789abcdef")
			f.ok(t, "vdb_kev_status", map[string]any{"id": vdbapi.Log4Shell})
			r := f.fake.Requests()[0]
			if r.Scheme != tc.scheme || r.Org != vdbapi.OrgA {
				t.Fatalf("upstream saw scheme %q org %q", r.Scheme, r.Org)
			}
		})
	}
}

// TestRateLimitReported: a 429 is reported with the limit and its reset;
// every request carried the one configured credential (never another).
func TestRateLimitReported(t *testing.T) {
	f := newFixture(t, setup{})
	f.fake.SetQuota(vdbapi.OrgA, 1000, 0)
	text := f.fails(t, "vdb_kev_status", map[string]any{"id": vdbapi.Log4Shell}, kernel.RateLimited)
	contains(t, text, "daily limit 1000", "resets in", "never switches to another credential")
	lacks(t, text, f.key)
	reqs := f.fake.Requests()
	if len(reqs) == 0 {
		t.Fatal("no request")
	}
	for _, r := range reqs {
		if !r.Contains(f.key) || r.Org != vdbapi.OrgA {
			t.Fatalf("a request went out with another credential: %+v", r)
		}
	}
}

// TestUpstreamHostility: HTML error pages, off-host redirects and a record
// that echoes the credential never carry it, or the page, to the client.
func TestUpstreamHostility(t *testing.T) {
	f := newFixture(t, setup{})
	f.fake.AddFault(vdbapi.Fault{Kind: vdbapi.FaultHTML, Times: 3})
	text := f.fails(t, "vdb_kev_status", map[string]any{"id": vdbapi.Log4Shell}, kernel.UpstreamUnavailable)
	lacks(t, text, "<html", "Bad Gateway</title>")

	f.fake.ClearFaults()
	f.fake.AddFault(vdbapi.Fault{Kind: vdbapi.FaultRedirect, Location: f.fake.ElsewhereURL() + "/steal", Times: 1})
	f.fails(t, "vdb_kev_status", map[string]any{"id": vdbapi.Log4Shell}, kernel.UpstreamError)
	for _, r := range f.fake.Requests() {
		if r.Host == vdbapi.HostElsewhere {
			t.Fatalf("the redirect was followed: %+v", r)
		}
	}

	f.fake.ClearFaults()
	f.fake.AddFault(vdbapi.Fault{Kind: vdbapi.FaultEchoCredential, Times: 1})
	res := f.call(t, "vdb_kev_status", map[string]any{"id": vdbapi.Log4Shell})
	_, hex, _ := strings.Cut(f.key, ":")
	lacks(t, mcptest.Text(res), hex)
}

// TestNumericEcho: a credential echoed as a JSON number is found too: the
// number becomes the string "[redacted]" and the rest of the answer passes.
func TestNumericEcho(t *testing.T) {
	const token = "98765432109876"
	f := newFixture(t, setup{credential: "Bearer " + token})
	f.fake.AddBearer(vdbapi.OrgA, token)
	f.fake.AddFault(vdbapi.Fault{Kind: vdbapi.FaultRaw, ContentType: "application/json", Body: `{"n":` + token + `,"id":"CVE-2021-44228"}`, Times: 1})
	res := f.call(t, "vdb_kev_status", map[string]any{"id": vdbapi.Log4Shell})
	lacks(t, mcptest.Text(res), token)
}
