package rfc2136_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	mdns "github.com/miekg/dns"

	"github.com/bulwarkmcp/bulwark/internal/fake/authdns"
	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/confirm"
	"github.com/bulwarkmcp/bulwark/kernel/mcptest"
	"github.com/bulwarkmcp/bulwark/servers/dns"
	"github.com/bulwarkmcp/bulwark/servers/dns/rfc2136"
	"github.com/bulwarkmcp/bulwark/servers/dns/tsig"
)

const (
	keyName = "bulwark-test."
	secret  = "aDuN3MJK7Ptz0Q0lQbbBv2Dq0vQ2E+JtG0M8q3Xk1sE="
	zone    = "example.com"
)

// zoneText is the zone every target starts with.
const zoneText = `example.com. 3600 IN SOA ns1.example.com. hostmaster.example.com. 1 3600 600 86400 300
example.com. 3600 IN NS ns1.example.com.
example.com. 3600 IN NS ns2.example.com.
ns1.example.com. 3600 IN A 198.51.100.53
ns2.example.com. 3600 IN A 198.51.100.54
www.example.com. 300 IN A 198.51.100.1
www.example.com. 300 IN A 198.51.100.2
example.com. 600 IN TXT "v=spf1 -all"
example.com. 600 IN MX 10 mail.example.com.
`

func testKey(t testing.TB) tsig.Key {
	t.Helper()
	k, err := tsig.NewKey(keyName, tsig.HMACSHA256, secret)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func newProvider(t testing.TB, addr string, key tsig.Key, mod func(o *rfc2136.Options)) *rfc2136.Provider {
	t.Helper()
	o := rfc2136.Options{Server: addr, Zones: []string{zone}, Key: key, Timeout: 5 * time.Second}
	if mod != nil {
		mod(&o)
	}
	p, err := rfc2136.New(o)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// startFake runs the fake server with the zone and the key.
func startFake(t testing.TB, modes authdns.Modes) *authdns.Server {
	t.Helper()
	s := authdns.Start(t, authdns.Options{Keys: map[string]string{keyName: secret}, Modes: modes})
	if err := s.AddZone(zoneText); err != nil {
		t.Fatal(err)
	}
	return s
}

// session is an MCP client of a dns server over p, behind the kernel.
func session(t testing.TB, p dns.Provider) *mcptest.Session {
	t.Helper()
	srv, err := dns.New(dns.Config{}, dns.Deps{Provider: p})
	if err != nil {
		t.Fatal(err)
	}
	opts := kernel.Options{Envelope: srv.Envelope(), Confirm: confirm.NewIssuer(nil, nil)}
	k, err := kernel.New(kernel.Info{Name: "bulwark-dns", Version: "test"}, srv.Tools(), &opts)
	if err != nil {
		t.Fatal(err)
	}
	return mcptest.Connect(t, k, nil)
}

// target is an authoritative server the tool suite runs against.
type target struct {
	name string
	addr string
	// lookup asks the server itself (dig for a real one) for the values
	// and TTL of name (relative) and type, values sorted.
	lookup func(t *testing.T, name, typ string) ([]string, uint32)
	// replace sets an RRSet behind the provider's back, as another client
	// of the server would.
	replace func(t *testing.T, name, typ string, values ...string)
}

// fakeTarget is the fake server as a target.
func fakeTarget(t *testing.T) (target, *authdns.Server) {
	s := startFake(t, authdns.Modes{})
	return target{name: "fake", addr: s.Addr(), lookup: queryLookup(s.Addr()), replace: updateReplace(s.Addr())}, s
}

// queryLookup asks addr over TCP, signed, with miekg/dns.
func queryLookup(addr string) func(t *testing.T, name, typ string) ([]string, uint32) {
	return func(t *testing.T, name, typ string) ([]string, uint32) {
		t.Helper()
		m := new(mdns.Msg)
		m.SetQuestion(owner(name), mdns.StringToType[typ])
		m.SetTsig(keyName, mdns.HmacSHA256, 300, time.Now().Unix())
		c := &mdns.Client{Net: "tcp", Timeout: 5 * time.Second, TsigSecret: map[string]string{keyName: secret}}
		in, _, err := c.Exchange(m, addr)
		if err != nil {
			t.Fatal(err)
		}
		return answerValues(in.Answer, typ)
	}
}

func owner(name string) string {
	if name == "@" {
		return zone + "."
	}
	return name + "." + zone + "."
}

// answerValues are the values and TTL of the answer's records of typ.
func answerValues(rrs []mdns.RR, typ string) ([]string, uint32) {
	var out []string
	var ttl uint32
	for _, rr := range rrs {
		if mdns.TypeToString[rr.Header().Rrtype] == typ {
			out = append(out, strings.TrimPrefix(rr.String(), rr.Header().String()))
			ttl = rr.Header().Ttl
		}
	}
	slices.Sort(out)
	return out, ttl
}

// updateReplace replaces an RRSet with a signed UPDATE of its own.
func updateReplace(addr string) func(t *testing.T, name, typ string, values ...string) {
	return func(t *testing.T, name, typ string, values ...string) {
		t.Helper()
		m := new(mdns.Msg)
		m.SetUpdate(zone + ".")
		m.Ns = append(m.Ns, &mdns.ANY{Hdr: mdns.RR_Header{Name: owner(name), Rrtype: mdns.StringToType[typ], Class: mdns.ClassANY}})
		for _, v := range values {
			rr, err := mdns.NewRR(owner(name) + " 300 IN " + typ + " " + v)
			if err != nil {
				t.Fatal(err)
			}
			m.Ns = append(m.Ns, rr)
		}
		m.SetTsig(keyName, mdns.HmacSHA256, 300, time.Now().Unix())
		c := &mdns.Client{Net: "tcp", Timeout: 5 * time.Second, TsigSecret: map[string]string{keyName: secret}}
		in, _, err := c.Exchange(m, addr)
		if err != nil || in.Rcode != mdns.RcodeSuccess {
			t.Fatalf("out-of-band update: %v %v", err, in)
		}
	}
}

func ctx() context.Context { return context.Background() }
