package localzone

import (
	"net"
	"strings"
	"testing"
	"time"

	mdns "github.com/miekg/dns"
)

// TestRateLimitPerSource: past the rate, one source gets every second
// response truncated (TC, no records) and the rest dropped, over UDP; over
// TCP it is always answered; another source is not affected (issue 10.3).
func TestRateLimitPerSource(t *testing.T) {
	p := testZone(t)
	clock := time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)
	r := startResponder(t, p, &ResponderOptions{ResponseRate: 5, Now: func() time.Time { return clock }})

	conn, err := net.Dial("udp", r.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	m := new(mdns.Msg)
	m.SetQuestion("www.example.test.", mdns.TypeA)
	req, _ := m.Pack()
	const sent = 25
	for range sent {
		if _, err := conn.Write(req); err != nil {
			t.Fatal(err)
		}
	}
	full, truncated := 0, 0
	buf := make([]byte, 4096)
	for {
		_ = conn.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
		n, err := conn.Read(buf)
		if err != nil {
			break
		}
		var in mdns.Msg
		if err := in.Unpack(buf[:n]); err != nil {
			t.Fatal(err)
		}
		switch {
		case in.Truncated && len(in.Answer) == 0:
			truncated++
			if n > len(req)+16 {
				t.Errorf("a slipped answer is %d bytes for a %d-byte query", n, len(req))
			}
		case len(in.Answer) == 1:
			full++
		default:
			t.Errorf("unexpected answer %v", &in)
		}
	}
	if full != 5 || truncated != (sent-5)/2 {
		t.Errorf("%d queries: %d answered, %d truncated, %d dropped; want 5 answered, %d truncated", sent, full, truncated, sent-full-truncated, (sent-5)/2)
	}
	// TCP is not limited (it cannot be spoofed).
	if in := query(t, r.Addr(), "tcp", "www.example.test.", mdns.TypeA, 0); len(in.Answer) != 1 {
		t.Errorf("TCP answer %v", in)
	}
}

func TestRRLBuckets(t *testing.T) {
	now := time.Unix(0, 0)
	l := newRRL(2, 2, func() time.Time { return now })
	a := &net.UDPAddr{IP: net.ParseIP("192.0.2.7"), Port: 1}
	sameNet := &net.UDPAddr{IP: net.ParseIP("192.0.2.200"), Port: 2}
	other := &net.UDPAddr{IP: net.ParseIP("198.51.100.1"), Port: 1}
	got := []verdict{l.check(a), l.check(sameNet), l.check(a), l.check(a), l.check(other)}
	want := []verdict{send, send, drop, slip, send}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("verdicts %v, want %v", got, want)
		}
	}
	now = now.Add(500 * time.Millisecond) // one token back
	if v := l.check(a); v != send {
		t.Errorf("after refill: %v", v)
	}
}

func TestListenAddr(t *testing.T) {
	cases := []struct {
		in, want string
		beyond   bool
		err      string
	}{
		{"", DefaultResponderAddr, false, ""},
		{":5353", "127.0.0.1:5353", false, ""},
		{"5353", "127.0.0.1:5353", false, ""}, // a bare port, as -http reads it
		{"127.0.0.1:53", "127.0.0.1:53", false, ""},
		{"[::1]:53", "[::1]:53", false, ""},
		{"localhost:53", "localhost:53", false, ""},
		{"0.0.0.0:5353", "0.0.0.0:5353", true, ""},
		{"[::]:5353", "[::]:5353", true, ""},
		{"192.0.2.1:53", "192.0.2.1:53", true, ""},
		{"bogus", "", false, "host:port"},
		{"example.com:53", "", false, "IP address"},
		{":99999", "", false, "port"},
		{":x", "", false, "port"},
	}
	for _, c := range cases {
		got, beyond, err := ListenAddr(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("ListenAddr(%q) = %v, want error with %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want || beyond != c.beyond {
			t.Errorf("ListenAddr(%q) = %q %v %v, want %q %v", c.in, got, beyond, err, c.want, c.beyond)
		}
	}
}
