package httpguard

import (
	"net/http/httptest"
	"slices"
	"testing"
)

func TestSplitHost(t *testing.T) {
	tests := []struct {
		in, host, port string
		ok             bool
	}{
		{"localhost", "localhost", "", true},
		{"LocalHost:8080", "localhost", "8080", true},
		{"example.com.", "example.com", "", true},
		{"example.com.:443", "example.com", "443", true},
		{"127.0.0.1:1", "127.0.0.1", "1", true},
		{"[::1]", "[::1]", "", true},
		{"[::1]:8080", "[::1]", "8080", true},
		{"[0:0:0:0:0:0:0:1]:80", "[::1]", "80", true},
		{"[::FFFF:127.0.0.1]", "[::ffff:127.0.0.1]", "", true},
		{"host:*", "host", "*", true},
		{"::1", "", "", false},              // IPv6 must be bracketed
		{"[::1", "", "", false},             // unclosed
		{"[::1]x", "", "", false},           // junk after bracket
		{"[127.0.0.1]", "", "", false},      // brackets only for IPv6
		{"[fe80::1%25eth0]", "", "", false}, // zones never match
		{"host:", "", "", false},
		{"host:99999", "", "", false},
		{"host:+80", "", "", false},
		{"host:8o", "", "", false},
		{"", "", "", false},
		{".", "", "", false},
		{"a..b", "", "", false},
		{"a..", "", "", false},
		{".a", "", "", false},
		{"evil.com@localhost", "", "", false},
		{"local host", "", "", false},
		{"localhost/", "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			host, port, err := splitHost(tt.in)
			if (err == nil) != tt.ok || host != tt.host || port != tt.port {
				t.Fatalf("splitHost(%q) = %q, %q, %v; want %q, %q, ok=%v", tt.in, host, port, err, tt.host, tt.port, tt.ok)
			}
		})
	}
}

func TestHostsCheck(t *testing.T) {
	custom, err := newHosts([]string{"mcp.example.com", "api.example.com:8443", "Other.Example.com:*", "[2001:db8::1]"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var zero hostGuard
	var nilHosts *hostGuard
	tests := []struct {
		name  string
		h     *hostGuard
		host  string
		allow bool
	}{
		{"zero: localhost", &zero, "localhost:8080", true},
		{"zero: LOCALHOST", &zero, "LOCALHOST", true},
		{"zero: 127.0.0.1", &zero, "127.0.0.1:3000", true},
		{"zero: [::1]", &zero, "[::1]:3000", true},
		{"zero: long ::1", &zero, "[0::1]", true},
		{"zero: rebinding name", &zero, "evil.example.com:8080", false},
		{"zero: other loopback", &zero, "127.0.0.2", false},
		{"zero: empty", &zero, "", false},
		{"nil: localhost", nilHosts, "localhost", true},
		{"nil: evil", nilHosts, "evil.com", false},
		{"custom: any port", custom, "MCP.example.com:1234", true},
		{"custom: no port", custom, "mcp.example.com", true},
		{"custom: trailing dot", custom, "mcp.example.com.", true},
		{"custom: exact port", custom, "api.example.com:8443", true},
		{"custom: wrong port", custom, "api.example.com:443", false},
		{"custom: port-less host for port entry", custom, "api.example.com", false},
		{"custom: star entry", custom, "other.example.com:9", true},
		{"custom: star in request", custom, "mcp.example.com:*", false},
		{"custom: ipv6", custom, "[2001:DB8:0::1]:443", true},
		{"custom: loopback not implied", custom, "localhost", false},
		{"custom: suffix trick", custom, "mcp.example.com.evil.com", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "/", nil)
			r.Host = tt.host
			err := tt.h.Check(r)
			if (err == nil) != tt.allow {
				t.Fatalf("Check(Host %q) = %v, want allow=%v", tt.host, err, tt.allow)
			}
		})
	}
}

func TestNewHostsRejectsMalformed(t *testing.T) {
	for _, entry := range []string{"", "::1", "a b", "host:x", "[::1"} {
		if _, err := newHosts([]string{entry}, nil); err == nil {
			t.Errorf("NewHosts(%q) = nil error", entry)
		}
	}
}

func TestDefaultHosts(t *testing.T) {
	loop := []string{"localhost", "127.0.0.1", "[::1]"}
	tests := []struct {
		bind string
		want []string
	}{
		{"127.0.0.1:8080", loop},
		{"localhost:8080", loop},
		{"[::1]:8080", loop},
		{"", loop},
		{":8080", loop},
		{"0.0.0.0:8080", loop},
		{"[::]:8080", loop},
		{"127.0.0.2:80", append(slices.Clone(loop), "127.0.0.2")},
		{"192.168.1.5:8080", append(slices.Clone(loop), "192.168.1.5")},
		{"[2001:db8::1]:8080", append(slices.Clone(loop), "[2001:db8::1]")},
		{"mcp.internal:8080", append(slices.Clone(loop), "mcp.internal")},
	}
	for _, tt := range tests {
		t.Run(tt.bind, func(t *testing.T) {
			got := DefaultHosts(tt.bind)
			if !slices.Equal(got, tt.want) {
				t.Fatalf("DefaultHosts(%q) = %v, want %v", tt.bind, got, tt.want)
			}
			if _, err := newHosts(got, nil); err != nil {
				t.Fatalf("NewHosts(DefaultHosts) = %v", err)
			}
		})
	}
}

func TestHostsHandler(t *testing.T) {
	hosts, _ := newHosts([]string{"mcp.example.com"}, nil)
	srv := serve(t, hosts.Handler(okHandler))
	zeroSrv := serve(t, (&hostGuard{}).Handler(okHandler))
	tests := []struct {
		name  string
		srv   string
		host  string
		allow bool
	}{
		{"allowed name", "custom", "mcp.example.com:8080", true},
		{"rebinding name", "custom", "evil.example.com", false},
		{"zero: listener's own 127.0.0.1", "zero", "", true},
		{"zero: localhost", "zero", "localhost:1", true},
		{"zero: evil", "zero", "evil.example.com", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := srv
			if tt.srv == "zero" {
				s = zeroSrv
			}
			got := send(t, s, wireReq{host: tt.host, body: "{}"})
			if tt.allow {
				wantOK(t, got)
				return
			}
			wantRefusal(t, got, 403, codeInvalidRequest, reasonHostForbidden)
			if got.rpc.ID != nil {
				t.Fatalf("id = %s, want none", got.rpc.ID)
			}
		})
	}
}

func FuzzSplitHost(f *testing.F) {
	for _, s := range []string{"localhost:8080", "[::1]:80", "example.com.", "[::ffff:1.2.3.4]", "a:b:c", "[", "host:*"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		host, port, err := splitHost(in)
		if err != nil {
			return
		}
		// Canonical output is stable and matches itself.
		joined := host
		if port != "" {
			joined += ":" + port
		}
		h2, p2, err := splitHost(joined)
		if err != nil || h2 != host || p2 != port {
			t.Fatalf("not idempotent: %q -> %q %q -> %q %q %v", in, host, port, h2, p2, err)
		}
		if port != "*" && !hostAllowed(map[string][]string{host: {""}}, in) {
			t.Fatalf("%q not allowed by its own canonical host %q", in, host)
		}
	})
}

// TestHostAllowed: a server checks a URL it will be reached by against its
// own Host allowlist as the guard reads it, the bound address's defaults
// when the list is empty.
func TestHostAllowed(t *testing.T) {
	for _, c := range []struct {
		allowed        []string
		bind, hostport string
		want           bool
	}{
		{nil, "127.0.0.1:8080", "127.0.0.1:8080", true},
		{nil, "127.0.0.1:8080", "localhost:8080", true},
		{nil, "127.0.0.1:8080", "10.0.0.5:8080", false},
		{nil, "10.0.0.5:8080", "10.0.0.5:8080", true},
		{[]string{"gw.example", "10.0.0.5:8080"}, "0.0.0.0:8080", "10.0.0.5:8080", true},
		{[]string{"gw.example", "10.0.0.5:8080"}, "0.0.0.0:8080", "10.0.0.5:9090", false},
		{[]string{"GW.example."}, "0.0.0.0:8080", "gw.example:443", true},
	} {
		if got, err := HostAllowed(c.allowed, c.bind, c.hostport); err != nil || got != c.want {
			t.Errorf("HostAllowed(%v, %q, %q) = %v, %v", c.allowed, c.bind, c.hostport, got, err)
		}
	}
	if _, err := HostAllowed([]string{"bad host"}, "", "x"); err == nil {
		t.Error("a malformed list is not an error")
	}
}
