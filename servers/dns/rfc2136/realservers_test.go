package rfc2136_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	mdns "github.com/miekg/dns"

	"github.com/bulwarkmcp/bulwark/internal/fake/realdns"
)

var realKey = realdns.Key{Name: keyName, Algorithm: "hmac-sha256", Secret: secret}

// realTarget is a real server as a target: its answers read by dig, other
// clients' changes made by nsupdate.
func realTarget(t *testing.T, s *realdns.Server) target {
	dig, nsupdate := realdns.Tool(t, "dig"), realdns.Tool(t, "nsupdate")
	keyFile := filepath.Join(t.TempDir(), "tsig.key")
	if err := os.WriteFile(keyFile, []byte(fmt.Sprintf("key %q { algorithm hmac-sha256; secret %q; };\n", keyName, secret)), 0o600); err != nil {
		t.Fatal(err)
	}
	host, port := strings.Split(s.Addr, ":")[0], strings.Split(s.Addr, ":")[1]
	return target{
		name: s.Kind, addr: s.Addr,
		lookup: func(t *testing.T, name, typ string) ([]string, uint32) {
			t.Helper()
			out, err := exec.Command(dig, "+norec", "+noall", "+answer", "+tcp", "@"+host, "-p", port, owner(name), typ).CombinedOutput()
			if err != nil {
				t.Fatalf("dig: %v\n%s", err, out)
			}
			var rrs []mdns.RR
			for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
				if line = strings.TrimSpace(line); line == "" || strings.HasPrefix(line, ";") {
					continue
				}
				rr, err := mdns.NewRR(line)
				if err != nil {
					t.Fatalf("dig printed %q: %v", line, err)
				}
				rrs = append(rrs, rr)
			}
			return answerValues(rrs, typ)
		},
		replace: func(t *testing.T, name, typ string, values ...string) {
			t.Helper()
			script := fmt.Sprintf("server %s %s\nzone %s\nupdate delete %s %s\n", host, port, zone, owner(name), typ)
			for _, v := range values {
				script += fmt.Sprintf("update add %s 300 %s %s\n", owner(name), typ, v)
			}
			cmd := exec.Command(nsupdate, "-k", keyFile)
			cmd.Stdin = strings.NewReader(script + "send\n")
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("nsupdate: %v\n%s", err, out)
			}
		},
	}
}

func primaryConfig() realdns.Config {
	return realdns.Config{Key: realKey, Zones: []realdns.Zone{{Name: zone, Text: zoneText}}}
}

// TestSuiteBIND runs the tool suite against BIND 9 as the primary; the
// reads after the first are incremental transfers.
func TestSuiteBIND(t *testing.T) {
	s := realdns.StartBIND(t, primaryConfig(), false)
	runSuite(t, realTarget(t, s))
	sawIXFR(t, s)
}

// TestSuiteKnot runs the same suite against Knot DNS.
func TestSuiteKnot(t *testing.T) {
	s := realdns.StartKnot(t, primaryConfig(), false)
	runSuite(t, realTarget(t, s))
	sawIXFR(t, s)
}

// sawIXFR: the server's log shows it served an incremental transfer.
func sawIXFR(t *testing.T, s *realdns.Server) {
	t.Helper()
	if !strings.Contains(s.Log(), "IXFR") {
		t.Fatalf("%s served no IXFR:\n%s", s.Kind, s.Log())
	}
}
