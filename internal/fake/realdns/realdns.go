// Package realdns starts real authoritative DNS servers — BIND 9's named
// and Knot DNS's knotd, from Debian's bind9 and knot packages — on loopback
// ports for tests and benchmarks, each in its own temporary directory with
// its own configuration, and stops them when the test ends. It is not a
// fake: it is how the tests meet the servers operators run.
//
// A test that needs a server calls Named or Knotd first: without the
// binary the test is skipped, unless CI=true, where it fails (scripts/test
// installs the packages and names the binaries in BULWARK_TEST_NAMED and
// BULWARK_TEST_KNOTD).
package realdns

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	mdns "github.com/miekg/dns"
)

// Key is a TSIG key a server knows.
type Key struct {
	Name      string // absolute, "bulwark-test."
	Algorithm string // "hmac-sha256" or "hmac-sha512"
	Secret    string // base64
}

// Zone is one zone a server serves: a primary from Text, which the key may
// update and transfer; or, when Primary is set, a secondary transferred
// from Primary (host:port) with the key, which accepts NOTIFY from it.
type Zone struct {
	Name    string // "example.com"
	Text    string // primary: the zone file
	Primary string // secondary: the primary's address
	// NoKey makes a secondary ask its primary without the key.
	NoKey bool
}

// Config is what a server serves.
type Config struct {
	Key   Key
	Zones []Zone
	// Port is the loopback port to listen on; a free one when 0.
	Port int
}

// Server is a running server.
type Server struct {
	Kind string // "bind" or "knot"
	Addr string // 127.0.0.1:port, UDP and TCP
	Dir  string

	cmd  *exec.Cmd
	mu   sync.Mutex
	logs bytes.Buffer
}

// Log is what the server wrote so far.
func (s *Server) Log() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.logs.String()
}

func (s *Server) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.logs.Write(p)
}

// Named returns the path of BIND's named, skipping the test without it
// (failing it under CI=true).
func Named(t testing.TB) string { return binary(t, "BULWARK_TEST_NAMED", "named", "bind9") }

// Knotd returns the path of Knot's knotd, likewise.
func Knotd(t testing.TB) string { return binary(t, "BULWARK_TEST_KNOTD", "knotd", "knot") }

func binary(t testing.TB, envName, name, pkg string) string {
	t.Helper()
	if p := os.Getenv(envName); p != "" {
		return p
	}
	for _, p := range []string{"/usr/sbin/" + name, "/usr/local/sbin/" + name} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("CI=true and %s is not installed (Debian: apt-get install %s; scripts/test installs it)", name, pkg)
	}
	t.Skipf("%s is not installed (Debian: apt-get install %s): the test against it is skipped", name, pkg)
	return ""
}

// Tool returns the path of a client program (dig, nsupdate, delv, kdig),
// skipping the test without it (failing it under CI=true).
func Tool(t testing.TB, name string) string {
	t.Helper()
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("CI=true and %s is not installed (Debian: bind9-dnsutils or knot-dnsutils)", name)
	}
	t.Skipf("%s is not installed (Debian: bind9-dnsutils or knot-dnsutils)", name)
	return ""
}

// FreePort returns a loopback port free for UDP and TCP just now.
func FreePort(t testing.TB) int {
	t.Helper()
	for range 50 {
		pc, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := pc.LocalAddr().(*net.UDPAddr).Port
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		pc.Close()
		if err == nil {
			l.Close()
			return port
		}
	}
	t.Fatal("no free loopback port")
	return 0
}

// start runs the server's command in dir and waits until every zone
// answers its SOA (a secondary: once transferred), or fails the test.
func start(t testing.TB, s *Server, cfg Config, args ...string) *Server {
	t.Helper()
	s.cmd = exec.Command(args[0], args[1:]...)
	s.cmd.Stdout, s.cmd.Stderr = s, s
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", s.Kind, err)
	}
	done := make(chan struct{})
	go func() { _ = s.cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = s.cmd.Process.Signal(os.Interrupt)
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = s.cmd.Process.Kill()
			<-done
		}
	})
	deadline := time.Now().Add(15 * time.Second)
	for _, z := range cfg.Zones {
		for !s.serves(z.Name) {
			select {
			case <-done:
				t.Fatalf("%s stopped:\n%s", s.Kind, s.Log())
			case <-time.After(50 * time.Millisecond):
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s does not serve %s after 15 s:\n%s", s.Kind, z.Name, s.Log())
			}
		}
	}
	return s
}

// serves reports whether the server answers zone's SOA with authority.
func (s *Server) serves(zone string) bool {
	m := new(mdns.Msg)
	m.SetQuestion(mdns.Fqdn(zone), mdns.TypeSOA)
	in, _, err := (&mdns.Client{Net: "tcp", Timeout: time.Second}).Exchange(m, s.Addr)
	return err == nil && in.Rcode == mdns.RcodeSuccess && in.Authoritative && len(in.Answer) > 0
}

// Serial is the zone's SOA serial as the server answers it now (0 when it
// does not answer).
func (s *Server) Serial(zone string) uint32 {
	m := new(mdns.Msg)
	m.SetQuestion(mdns.Fqdn(zone), mdns.TypeSOA)
	in, _, err := (&mdns.Client{Net: "tcp", Timeout: time.Second}).Exchange(m, s.Addr)
	if err != nil || len(in.Answer) == 0 {
		return 0
	}
	if soa, ok := in.Answer[0].(*mdns.SOA); ok {
		return soa.Serial
	}
	return 0
}

func write(t testing.TB, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

// zoneFile is the zone's file name in the server's directory.
func zoneFile(dir string, z Zone) string {
	return filepath.Join(dir, strings.TrimSuffix(z.Name, ".")+".zone")
}

// hostPort splits "127.0.0.1:5300".
func hostPort(addr string) (string, string) {
	h, p, _ := net.SplitHostPort(addr)
	return h, p
}
