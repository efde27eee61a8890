package zonefile

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	mdns "github.com/miekg/dns"
)

const good = "$ORIGIN a.test.\n$TTL 300\n@ IN SOA ns.a.test. h.a.test. 1 2 3 4 5\n@ IN NS ns1.example.\nwww IN A 192.0.2.1\n"

func TestPrecount(t *testing.T) {
	cases := []struct {
		text   string
		budget bool // refused as over the budget
		ok     bool
	}{
		{"$GENERATE 1-10 h$ A 192.0.2.1\n", false, true},
		{"$GENERATE 0-65535 @ TXT x\n", false, true},
		{strings.Repeat("$GENERATE 0-65535 @ TXT x\n", 4), true, false},
		{strings.Repeat("  $generate 0-65535/1 @ TXT x\n", 4), true, false},
		{"$GENERATE 0-65535/2 @ TXT x\n$GENERATE 0-65535/2 @ TXT x\n$GENERATE 0-65535/2 @ TXT x\n", false, true},
		{"$INCLUDE /etc/passwd\n", false, false},
		{"$include /etc/passwd a.test.\n", false, false},
		{"$GENERATE 5-1 h$ A 192.0.2.1\n", false, false},
		{"$GENERATE 0-99999999 h$ A 192.0.2.1\n", false, false},
		{"$GENERATE x h$ A 192.0.2.1\n", false, false},
	}
	for _, c := range cases {
		err := Precount(c.text, MaxRecords)
		if (err == nil) != c.ok || errors.Is(err, ErrBudget) != c.budget {
			t.Errorf("Precount(%q) = %v, want ok %v budget %v", c.text, err, c.ok, c.budget)
		}
	}
}

func TestCheck(t *testing.T) {
	ns := []string{"ns1.example."}
	if err := Check(context.Background(), good, "a.test", ns); err != nil {
		t.Fatal(err)
	}
	bad := map[string]string{
		"include":  good + "$INCLUDE x\n",
		"origin":   strings.Replace(good, "$ORIGIN a.test.", "$ORIGIN b.test.", 1),
		"ttl 0":    good + "x 0 IN A 192.0.2.1\n",
		"$ttl 0":   strings.Replace(good, "$TTL 300", "$TTL 0", 1),
		"class":    good + "x 300 CH A 192.0.2.1\n",
		"outside":  good + "x.b.test. 300 IN A 192.0.2.1\n",
		"no soa":   strings.Replace(good, "@ IN SOA ns.a.test. h.a.test. 1 2 3 4 5\n", "", 1),
		"two soa":  good + "@ IN SOA ns.a.test. h.a.test. 2 2 3 4 5\n",
		"no ns":    strings.Replace(good, "ns1.example.", "other.example.", 1),
		"syntax":   good + "www IN A nope\n",
		"generate": good + strings.Repeat("$GENERATE 0-65535 g$ A 192.0.2.1\n", 4),
	}
	for name, text := range bad {
		var ze *Error
		if err := Check(context.Background(), text, "a.test", ns); !errors.As(err, &ze) {
			t.Errorf("%s: Check = %v, want an *Error", name, err)
		}
	}
}

func TestRecordsStopsOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	err := Records(ctx, "$ORIGIN a.test.\n$GENERATE 0-65535 h$ 300 IN A 192.0.2.1\n", "a.test.", Options{}, func(mdns.RR, string) error {
		if n++; n == 10 {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) || n > 10+checkEvery {
		t.Fatalf("err = %v after %d records", err, n)
	}
}

// TestAcquireBounds: at most MaxParses parses hold a slot; the next one
// waits, and gives up when its caller leaves.
func TestAcquireBounds(t *testing.T) {
	var releases []func()
	for range MaxParses {
		r, err := Acquire(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		releases = append(releases, r)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if _, err := Acquire(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Acquire with every slot taken = %v", err)
	}
	releases[0]()
	r, err := Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	r()
	for _, r := range releases[1:] {
		r()
	}
}

// FuzzCheck: Check never panics, and whatever it accepts parses within the
// budget.
func FuzzCheck(f *testing.F) {
	for _, s := range []string{good, good + "$GENERATE 1-3 h$ A 192.0.2.$\n", "$INCLUDE x\n", "$GENERATE 0-65535/0 @ TXT x\n", "@ 0 IN A 1.2.3.4\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		if err := Check(context.Background(), text, "a.test", []string{"ns1.example."}); err != nil {
			return
		}
		n := 0
		if err := Records(context.Background(), text, "a.test.", Options{DefaultTTL: 3600}, func(mdns.RR, string) error { n++; return nil }); err != nil || n > MaxRecords {
			t.Fatalf("accepted file does not parse within the budget: %v, %d records", err, n)
		}
	})
}
