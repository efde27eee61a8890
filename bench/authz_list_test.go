package bench

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/httpguard"
	"github.com/bulwarkmcp/bulwark/kernel/identity"
	dnssrv "github.com/bulwarkmcp/bulwark/servers/dns"
	"github.com/bulwarkmcp/bulwark/servers/dns/localzone"
)

// listZones is how many zones the local store holds for
// BenchmarkAuthzListZones: a listing the policy filters zone by zone.
const listZones = 20

// benchZoneNames are the zones of the local store: some a delegation of
// the policy file names, some not; the principal "local" is in the group
// readers, so every one of them is listed.
func benchZoneNames() []string {
	var names []string
	for i := range listZones {
		switch i % 4 {
		case 0:
			names = append(names, fmt.Sprintf("z%d.team-a.example", i))
		case 1:
			names = append(names, fmt.Sprintf("z%d.example.com", i))
		case 2:
			names = append(names, fmt.Sprintf("z%d.team-b.example", i))
		default:
			names = append(names, fmt.Sprintf("z%d.example.org", i))
		}
	}
	return names
}

// dnsHTTPHandler is `bulwark dns` on the local store holding
// benchZoneNames, served over HTTP as authzHTTPHandler serves (every
// guard, the fast path on), authenticated by auth (nil: none, the
// principal "local"), with the policy file in force unless policy is
// empty.
func dnsHTTPHandler(tb testing.TB, policy string, auth identity.Authenticator) http.Handler {
	_, h := dnsHTTP(tb, policy, auth)
	return h
}

// dnsHTTP is dnsHTTPHandler with its kernel server.
func dnsHTTP(tb testing.TB, policy string, auth identity.Authenticator) (*kernel.Server, http.Handler) {
	p, err := localzone.New(tb.TempDir(), &localzone.Options{DisableSync: true})
	if err != nil {
		tb.Fatal(err)
	}
	for _, name := range benchZoneNames() {
		if _, _, err := p.CreateZone(context.Background(), dnssrv.CreateZoneRequest{Name: name, Mode: "primary"}); err != nil {
			tb.Fatal(err)
		}
	}
	srv, err := dnssrv.New(dnssrv.Config{}, dnssrv.Deps{Provider: p})
	if err != nil {
		tb.Fatal(err)
	}
	opts := &kernel.Options{Envelope: srv.Envelope()}
	if policy != "" {
		opts.Authz = policyFiles(tb, policy)
	}
	ks, err := kernel.New(kernel.Info{Name: "bulwark-dns", Version: "v0"}, srv.Tools(), opts)
	if err != nil {
		tb.Fatal(err)
	}
	h, err := ks.HTTPHandler(kernel.HTTPOptions{Addr: authzHTTPAddr, Auth: auth, Guards: httpguard.PipelineOptions{DisableFlood: true}})
	if err != nil {
		tb.Fatal(err)
	}
	return ks, h
}

const listZonesBody = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"list_zones","arguments":{}}}`

// serveListZones sends one list_zones call to h and checks that it lists
// every zone.
func serveListZones(tb testing.TB, h http.Handler, body string) {
	tb.Helper()
	w := serveMCP(h, body)
	if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `\"total_entries\":`+strconv.Itoa(listZones)) {
		tb.Fatalf("list_zones: %d %.600s", w.Code, w.Body)
	}
}

// coldPrincipals is how many principals cyclingAuth takes turns with: their
// entries stay in the authorizer's principal cache (4,096), while their
// decisions (coldPrincipals × listZones) overflow the memo's 4,096 slots.
const coldPrincipals = 1000

// cyclingAuth authenticates every request as the next of coldPrincipals
// principals, each in the group readers: a listing the memo cannot answer.
type cyclingAuth struct{ n atomic.Uint64 }

func (a *cyclingAuth) Authenticate(*http.Request) (identity.Principal, error) {
	id := "u" + strconv.FormatUint(a.n.Add(1)%coldPrincipals, 10)
	return identity.Principal{ID: id, Plan: "local", Scheme: identity.SchemeAPIKey, Groups: []string{"readers"}}, nil
}

// BenchmarkAuthzListZones measures a list_zones call of `bulwark dns` on
// the local store (listZones zones) over the HTTP handler, without a
// policy and with the eight-policy file, in process CPU time over
// alternating blocks of 100 calls (benchAuthzBlocks). With the policy the
// call is decided on the server and the listing filtered zone by zone
// (Call.Permits: one decision a zone). step-cpu-ns/call is what the policy
// adds to the call; cpu-authz/plain is bounded at 1.05. repeated sends the
// same call as the same principal (the memo answers each zone's
// decision); cold takes turns among coldPrincipals principals, so that
// the memo answers almost none and cedar-go decides every zone.
func BenchmarkAuthzListZones(b *testing.B) {
	b.Run("repeated", func(b *testing.B) {
		benchAuthzBlocks(b, []http.Handler{dnsHTTPHandler(b, "", nil), dnsHTTPHandler(b, benchPolicy, nil)},
			func(int) string { return listZonesBody }, serveListZones)
	})
	b.Run("cold", func(b *testing.B) {
		benchAuthzBlocks(b, []http.Handler{dnsHTTPHandler(b, "", &cyclingAuth{}), dnsHTTPHandler(b, benchPolicy, &cyclingAuth{})},
			func(int) string { return listZonesBody }, serveListZones)
	})
}

// BenchmarkAuthzListZonesOne runs one of BenchmarkAuthzListZones's
// handlers alone (no policy or the policy file; repeated or cold), for a
// profile or an instruction count of one path.
func BenchmarkAuthzListZonesOne(b *testing.B) {
	for _, h := range []struct{ name, policy string }{{"plain", ""}, {"policy", benchPolicy}} {
		for _, cold := range []bool{false, true} {
			name := h.name + "/repeated"
			var auth identity.Authenticator
			if cold {
				name, auth = h.name+"/cold", &cyclingAuth{}
			}
			b.Run(name, func(b *testing.B) {
				hd := dnsHTTPHandler(b, h.policy, auth)
				for range coldPrincipals + 100 { // every principal's entry built
					serveListZones(b, hd, listZonesBody)
				}
				b.ReportAllocs()
				b.ResetTimer()
				for b.Loop() {
					serveListZones(b, hd, listZonesBody)
				}
			})
		}
	}
}
