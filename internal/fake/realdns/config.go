package realdns

import (
	"fmt"
	"strings"
	"testing"
)

// StartBIND runs named with cfg on a free loopback port until the test
// ends: primaries the key may update and transfer (allow-update,
// allow-transfer), secondaries transferred with the key. With noWait it
// returns once named runs, without waiting for its zones (a secondary the
// primary refuses never loads).
func StartBIND(t testing.TB, cfg Config, noWait bool) *Server {
	t.Helper()
	bin := Named(t)
	s := &Server{Kind: "bind", Dir: t.TempDir()}
	port := cfg.Port
	if port == 0 {
		port = FreePort(t)
	}
	s.Addr = fmt.Sprintf("127.0.0.1:%d", port)
	var b strings.Builder
	fmt.Fprintf(&b, `options {
	directory %q;
	pid-file %q;
	listen-on port %d { 127.0.0.1; };
	listen-on-v6 { none; };
	recursion no;
	dnssec-validation no;
	notify no;
	minimal-responses yes;
	max-journal-size unlimited;
};
controls { };
key %q {
	algorithm %s;
	secret %q;
};
`, s.Dir, s.Dir+"/named.pid", port, cfg.Key.Name, cfg.Key.Algorithm, cfg.Key.Secret)
	for _, z := range cfg.Zones {
		file := zoneFile(s.Dir, z)
		if z.Primary == "" {
			write(t, file, z.Text)
			fmt.Fprintf(&b, "zone %q {\n\ttype primary;\n\tfile %q;\n\tallow-update { key %q; };\n\tallow-transfer { key %q; };\n};\n",
				z.Name, file, cfg.Key.Name, cfg.Key.Name)
			continue
		}
		host, p := hostPort(z.Primary)
		key := fmt.Sprintf(" key %q", cfg.Key.Name)
		if z.NoKey {
			key = ""
		}
		fmt.Fprintf(&b, "zone %q {\n\ttype secondary;\n\tprimaries { %s port %s%s; };\n\tfile %q;\n\tmasterfile-format text;\n};\n",
			z.Name, host, p, key, file)
	}
	conf := s.Dir + "/named.conf"
	write(t, conf, b.String())
	if noWait {
		cfg = Config{}
	}
	return start(t, s, cfg, bin, "-g", "-c", conf)
}

// StartKnot runs knotd with cfg likewise: primaries with an acl that lets
// the key update and transfer, secondaries that transfer with the key and
// take NOTIFY signed with it.
func StartKnot(t testing.TB, cfg Config, noWait bool) *Server {
	t.Helper()
	bin := Knotd(t)
	s := &Server{Kind: "knot", Dir: t.TempDir()}
	port := cfg.Port
	if port == 0 {
		port = FreePort(t)
	}
	s.Addr = fmt.Sprintf("127.0.0.1:%d", port)
	var b strings.Builder
	fmt.Fprintf(&b, `server:
    listen: 127.0.0.1@%d
    rundir: %q
database:
    storage: %q
log:
  - target: stderr
    any: info
key:
  - id: %s
    algorithm: %s
    secret: %s
acl:
  - id: bulwark_key
    address: 127.0.0.1
    key: %s
    action: [update, transfer, notify]
template:
  - id: default
    storage: %q
    zonefile-sync: -1
    journal-content: changes
    semantic-checks: off
`, port, s.Dir, s.Dir, cfg.Key.Name, cfg.Key.Algorithm, cfg.Key.Secret, cfg.Key.Name, s.Dir)
	var remotes, zones strings.Builder
	for i, z := range cfg.Zones {
		file := zoneFile(s.Dir, z)
		if z.Primary == "" {
			write(t, file, z.Text)
			fmt.Fprintf(&zones, "  - domain: %s\n    file: %q\n    acl: bulwark_key\n", z.Name, file)
			continue
		}
		host, p := hostPort(z.Primary)
		fmt.Fprintf(&remotes, "  - id: primary%d\n    address: %s@%s\n", i, host, p)
		if !z.NoKey {
			fmt.Fprintf(&remotes, "    key: %s\n", cfg.Key.Name)
		}
		fmt.Fprintf(&zones, "  - domain: %s\n    file: %q\n    master: primary%d\n    acl: bulwark_key\n", z.Name, file, i)
	}
	if remotes.Len() > 0 {
		b.WriteString("remote:\n" + remotes.String())
	}
	b.WriteString("zone:\n" + zones.String())
	conf := s.Dir + "/knot.conf"
	write(t, conf, b.String())
	if noWait {
		cfg = Config{}
	}
	return start(t, s, cfg, bin, "-c", conf, "-s", s.Dir+"/knot.sock")
}
