package vdbapi

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"testing/synctest"
	"time"
)

// TestInMemoryInABubble: a fake made with InMemory inside a
// testing/synctest bubble answers over Dial with no socket, so its slow
// faults take bubble time (a slow 503 of 28 s, then a slow 429 carrying the
// test's RateLimit-Reset) and the test never sleeps; an address it does
// not serve is refused.
func TestInMemoryInABubble(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := Start(t, &Options{InMemory: true})
		key := f.AddKey(OrgA, "secret-a")
		tr := &http.Transport{DialContext: f.Dial}
		defer tr.CloseIdleConnections()
		hc := &http.Client{Transport: tr}
		get := func() *http.Response {
			req, _ := http.NewRequest("GET", f.APIURL()+APIVersion+"/sources", nil)
			req.Header.Set("Authorization", "ApiKey "+key)
			res, err := hc.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			return res
		}
		if res := get(); res.StatusCode != 200 {
			t.Fatalf("in memory: %d", res.StatusCode)
		}
		f.AddFault(Fault{Kind: FaultError, Status: 503, Delay: 28 * time.Second, Times: 1})
		f.AddFault(Fault{Kind: FaultRateLimited, Delay: 10 * time.Second, Reset: "9223372036854775807", Times: 1})
		start := time.Now()
		if res := get(); res.StatusCode != 503 || time.Since(start) != 28*time.Second {
			t.Fatalf("slow 503: %d after %v", res.StatusCode, time.Since(start))
		}
		if res := get(); res.StatusCode != 429 || res.Header.Get("RateLimit-Reset") != "9223372036854775807" ||
			time.Since(start) != 38*time.Second {
			t.Fatalf("slow 429: %d, reset %q, after %v", res.StatusCode, res.Header.Get("RateLimit-Reset"), time.Since(start))
		}
		if _, err := f.Dial(context.Background(), "tcp", "127.0.0.1:9"); !errors.Is(err, errNoHost) {
			t.Fatalf("an unserved address: %v", err)
		}
	})
}
