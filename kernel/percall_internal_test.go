package kernel

import (
	"net"
	"net/netip"
	"reflect"
	"testing"
)

// clientNetworkByPrefix is the formatting clientNetwork replaced for IPv4:
// netip.Prefix.String of the masked address.
func clientNetworkByPrefix(remote string) string {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		host = remote
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return ""
	}
	a = a.Unmap()
	bits := 64
	if a.Is4() {
		bits = 24
	}
	p, _ := a.Prefix(bits)
	return p.String()
}

// FuzzClientNetwork: the audit's client network is netip's prefix string,
// for every remote address (IPv4, IPv4-mapped IPv6, IPv6 with and without a
// zone, no port, garbage).
func FuzzClientNetwork(f *testing.F) {
	for _, s := range []string{"127.0.0.1:40000", "198.51.100.7:1", "0.0.0.0:0", "255.255.255.255:65535", "[::ffff:203.0.113.9]:443",
		"[2001:db8::1]:80", "[fe80::1%eth0]:80", "10.1.2.3", "::1", "", "x:1", "1.2.3:4", "[::ffff:1.2.3.4%z]:1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, remote string) {
		if got, want := clientNetwork(remote), clientNetworkByPrefix(remote); got != want {
			t.Fatalf("clientNetwork(%q) = %q, want %q", remote, got, want)
		}
	})
}

// TestUntrustedMetaPerSource: every result's _meta names its own server's
// envelope source, from one shared value per source.
func TestUntrustedMetaPerSource(t *testing.T) {
	a, b := untrustedMeta("hetzner-cloud-api"), untrustedMeta("rustpad")
	if len(a) != 1 || a["source"] != "hetzner-cloud-api" || len(b) != 1 || b["source"] != "rustpad" {
		t.Fatalf("%v, %v", a, b)
	}
	if again := untrustedMeta("hetzner-cloud-api"); reflect.ValueOf(again).UnsafePointer() != reflect.ValueOf(a).UnsafePointer() {
		t.Fatal("a source's value was built twice")
	}
	if e := untrustedMeta(""); len(e) != 1 || e["source"] != "" {
		t.Fatalf("empty source: %v", e)
	}
}
