package localzone_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bulwarkmcp/bulwark/internal/fake/realdns"
	"github.com/bulwarkmcp/bulwark/servers/dns"
	"github.com/bulwarkmcp/bulwark/servers/dns/localzone"
)

func rec(v string) []any { return []any{map[string]any{"value": v}} }

// seedSigned fills a zone with what the proofs must cover: plain data, a
// wildcard, an empty non-terminal, a CNAME and an insecure delegation.
func seedSigned(t *testing.T, s *hiddenPrimary, zone string) {
	t.Helper()
	s.ok(t, "create_zone", map[string]any{"name": zone, "mode": "primary"}, nil)
	for _, r := range []struct{ name, typ, value string }{
		{"www", "A", "198.51.100.1"},
		{"www", "AAAA", "2001:db8::1"},
		{"*.wild", "TXT", `"wildcard"`},
		{"deep.ent", "A", "198.51.100.2"},
		{"alias", "CNAME", "www"},
		{"sub", "NS", "ns.sub." + zone + "."},
		{"ns.sub", "A", "198.51.100.53"},
	} {
		s.ok(t, "add_records", map[string]any{"zone": zone, "name": r.name, "type": r.typ, "records": rec(r.value)}, nil)
	}
}

// TestDNSSECValidatedByDelv: zones signed with each algorithm and each
// denial of existence are validated by BIND's delv, with the DS that
// get_zone shows as the only trust anchor: answers, NXDOMAIN, NODATA,
// wildcard answers, an empty non-terminal, a CNAME and the absence of a
// DS at an insecure delegation. get_zone never shows the private key.
func TestDNSSECValidatedByDelv(t *testing.T) {
	delv := realdns.Tool(t, "delv")
	for _, d := range []localzone.DNSSEC{
		{Algorithm: localzone.AlgECDSAP256, Denial: localzone.DenialNSEC},
		{Algorithm: localzone.AlgEd25519, Denial: localzone.DenialNSEC3},
		{Algorithm: localzone.AlgECDSAP256, Denial: localzone.DenialNSEC3},
		{Algorithm: localzone.AlgEd25519, Denial: localzone.DenialNSEC},
	} {
		t.Run(d.Algorithm+"-"+d.Denial, func(t *testing.T) {
			zone := "signed.example"
			s := startHiddenPrimary(t, nil, &localzone.Options{DisableSync: true, DNSSEC: map[string]localzone.DNSSEC{zone: d}})
			dir := s.p.Dir()
			seedSigned(t, s, zone)
			var z struct{ Zone dns.Zone }
			text := s.ok(t, "get_zone", map[string]any{"zone": zone}, &z)
			if z.Zone.DNSSEC == nil || len(z.Zone.DNSSEC.DS) != 1 || z.Zone.DNSSEC.Denial != d.Denial {
				t.Fatalf("get_zone: %s", text)
			}
			key, err := os.ReadFile(filepath.Join(dir, zone+".dnssec-key"))
			if err != nil {
				t.Fatal(err)
			}
			if private := privateKeyOf(t, string(key)); strings.Contains(text, private) {
				t.Fatal("get_zone shows the private key")
			}
			if fi, _ := os.Stat(filepath.Join(dir, zone+".dnssec-key")); fi.Mode().Perm() != 0o600 {
				t.Fatalf("key file mode %v", fi.Mode())
			}
			anchors := filepath.Join(t.TempDir(), "anchors.conf")
			f := strings.Fields(z.Zone.DNSSEC.DS[0]) // owner ttl IN DS tag alg digesttype digest
			if err := os.WriteFile(anchors, []byte(fmt.Sprintf("trust-anchors { %s static-ds %s %s %s \"%s\"; };\n", f[0], f[4], f[5], f[6], f[7])), 0o600); err != nil {
				t.Fatal(err)
			}
			host, port, _ := strings.Cut(s.r.Addr(), ":")
			// A control: with another digest as the anchor, nothing validates.
			wrong := filepath.Join(t.TempDir(), "wrong.conf")
			bad := strings.Repeat("A", len(f[7]))
			if err := os.WriteFile(wrong, []byte(fmt.Sprintf("trust-anchors { %s static-ds %s %s %s \"%s\"; };\n", f[0], f[4], f[5], f[6], bad)), 0o600); err != nil {
				t.Fatal(err)
			}
			if out, _ := exec.Command(delv, "@"+host, "-p", port, "-a", wrong, "+root="+zone, "+tcp", "www."+zone, "A").CombinedOutput(); strings.Contains(string(out), "fully validated") {
				t.Fatalf("delv validated with a wrong anchor:\n%s", out)
			}
			for _, q := range []struct{ name, typ, want string }{
				{"www", "A", "; fully validated"},
				{"www", "MX", "; negative response, fully validated"},
				{"nothere", "A", "; negative response, fully validated"},
				{"a.b.nothere", "TXT", "; negative response, fully validated"},
				{"x.wild", "TXT", "; fully validated"},
				{"x.wild", "A", "; negative response, fully validated"},
				{"ent", "A", "; negative response, fully validated"},
				{"alias", "A", "; fully validated"},
				{"sub", "DS", "; negative response, fully validated"},
				{"@", "DNSKEY", "; fully validated"},
				{"@", "SOA", "; fully validated"},
			} {
				name := zone
				if q.name != "@" {
					name = q.name + "." + zone
				}
				out, _ := exec.Command(delv, "@"+host, "-p", port, "-a", anchors, "+root="+zone, "+tcp", name, q.typ).CombinedOutput()
				if !strings.Contains(string(out), q.want) {
					t.Errorf("delv %s %s: want %q:\n%s", name, q.typ, q.want, out)
				}
			}
		})
	}
}

// privateKeyOf is the PrivateKey line's value in a key file.
func privateKeyOf(t *testing.T, file string) string {
	t.Helper()
	i := strings.Index(file, "PrivateKey: ")
	if i < 0 {
		t.Fatalf("no private key in the key file")
	}
	v := file[i+len("PrivateKey: "):]
	if j := strings.IndexAny(v, `\"`); j > 0 {
		v = v[:j]
	}
	return v
}
