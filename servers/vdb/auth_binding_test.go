package vdb_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/bulwarkmcp/bulwark/internal/fake/vdbapi"
	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/seal"
	"github.com/bulwarkmcp/bulwark/servers/vdb"
)

// TestSiteErrorsNameTheSite: a sign-in site that answers too much, with a
// redirect, or drops the connection is named as the sign-in site, with its
// own size limit — never as the VDB API and its 3 MiB.
func TestSiteErrorsNameTheSite(t *testing.T) {
	f := newFixture(t, setup{noKey: true})
	for _, tc := range []struct {
		fault vdbapi.Fault
		code  kernel.Code
		want  []string
	}{
		{vdbapi.Fault{Kind: vdbapi.FaultHuge, Size: 1 << 20}, kernel.ResourceExhausted, []string{"sign-in site", "65536 bytes"}},
		{vdbapi.Fault{Kind: vdbapi.FaultRedirect, Location: "/elsewhere"}, kernel.UpstreamError, []string{"sign-in site answered with a redirect"}},
		{vdbapi.Fault{Kind: vdbapi.FaultReset}, kernel.UpstreamUnavailable, []string{"sign-in site could not be reached"}},
	} {
		tc.fault.Host, tc.fault.Times = vdbapi.HostSite, 1
		f.fake.AddFault(tc.fault)
		text := f.fails(t, "vdb_auth_start", nil, tc.code)
		contains(t, text, tc.want...)
		lacks(t, text, "VDB", fmt.Sprint(vdb.MaxBufferedBytes))
	}
}

// TestAnalyzeOtherDetailRefusedFirst: analyze with a detail other than
// summary is refused before any upstream request.
func TestAnalyzeOtherDetailRefusedFirst(t *testing.T) {
	f := newFixture(t, setup{})
	for _, d := range []string{"full", "raw"} {
		f.fails(t, "vdb_vuln", map[string]any{"id": vdbapi.Log4Shell, "detail": d, "analyze": true}, kernel.InvalidArgument)
	}
	if n := f.apiCalls(); n != 0 {
		t.Fatalf("%d upstream requests before the refusal", n)
	}
}

// TestGrantBoundToTransport: a grant started on a stdio server (principal
// "local") and approved does not open on an HTTP server without
// authentication (principal "local" too) that shares MCP_AEAD_KEY and the
// sign-in site: the poll is refused, /token is never called, and no key is
// stored there. The stdio server still redeems it.
func TestGrantBoundToTransport(t *testing.T) {
	f := newFixture(t, setup{noKey: true})
	grant, code := f.start(t)
	if err := f.fake.ApproveDevice(code, f.fake.AddKey(vdbapi.OrgB, "secret-b")); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(6 * time.Second)

	sealer, err := seal.New(testMaster, &seal.Options{Now: f.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	keys := vdb.NewMemoryKeys(sealer)
	url := serveHTTP(t, f.fake, false, vdb.Config{}, vdb.Deps{Sealer: sealer, Keys: keys, Now: f.clock.Now})
	h := &httpFixture{fake: f.fake, url: url}
	out, isErr := callHTTP(t, h.session(t, "", ""), "vdb_auth_poll", map[string]any{"grant": grant})
	if !isErr || !strings.Contains(fmt.Sprint(out), "invalid_argument") {
		t.Fatalf("the HTTP server opened a stdio grant: %v", out)
	}
	if n := f.tokenCalls(); n != 0 {
		t.Fatalf("%d /token calls for a grant of another transport", n)
	}
	if _, ok, _ := keys.Get("local"); ok {
		t.Fatal("the HTTP server stored the key of a stdio sign-in")
	}
	if st := f.poll(t, grant); st["status"] != "signed_in" {
		t.Fatalf("the stdio server's own poll: %v", st)
	}
}

// TestGrantShareForOnePrincipal: one principal can hold at most its share
// of pending grants; past it, its next new grant is refused with
// resource_exhausted, while its existing grants still poll and another
// principal still signs in.
func TestGrantShareForOnePrincipal(t *testing.T) {
	sealer, err := seal.New(testMaster, nil)
	if err != nil {
		t.Fatal(err)
	}
	const share = 32 // maxGrantsPerPrincipal
	f := newHTTPFixtureDeps(t, true, &vdbapi.Options{AuthorizeLimit: 10 * share}, vdb.Config{}, vdb.Deps{Sealer: sealer})
	alice, bob := f.session(t, aliceMCPKey, ""), f.session(t, bobMCPKey, "")
	startPoll := func(who string) (string, map[string]any, bool) {
		cs := alice
		if who == "bob" {
			cs = bob
		}
		st, isErr := callHTTP(t, cs, "vdb_auth_start", nil)
		if isErr {
			t.Fatalf("%s start: %v", who, st)
		}
		grant, _ := st["grant"].(string)
		out, isErr := callHTTP(t, cs, "vdb_auth_poll", map[string]any{"grant": grant})
		return grant, out, isErr
	}
	var first string
	for i := range share {
		grant, out, isErr := startPoll("alice")
		if isErr || out["status"] != "pending" {
			t.Fatalf("alice's grant %d: %v", i+1, out)
		}
		if i == 0 {
			first = grant
		}
	}
	if _, out, isErr := startPoll("alice"); !isErr || !strings.Contains(fmt.Sprint(out), "resource_exhausted") {
		t.Fatalf("alice's grant %d past her share: %v", share+1, out)
	}
	if out, isErr := callHTTP(t, alice, "vdb_auth_poll", map[string]any{"grant": first}); isErr || out["status"] != "pending" {
		t.Fatalf("alice's first grant no longer polls: %v", out)
	}
	if _, out, isErr := startPoll("bob"); isErr || out["status"] != "pending" {
		t.Fatalf("bob is locked out by alice's grants: %v", out)
	}
}
