package hetznerapi

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// BenchmarkHandler measures the fake's own cost per request, without the
// network, so client benchmarks can subtract it.
func BenchmarkHandler(b *testing.B) {
	s := New(&Options{DisableRateLimit: true})
	if _, err := s.AddZone(ZoneSeed{Name: "example.com"}); err != nil {
		b.Fatal(err)
	}
	for i := range 200 {
		if _, err := s.AddRRSet("example.com", RRSetSeed{Name: fmt.Sprintf("h%03d", i), Type: "A",
			Records: recs("192.0.2.1")}); err != nil {
			b.Fatal(err)
		}
	}
	auth := "Bearer " + s.Token()
	run := func(b *testing.B, method, path, body string) {
		for b.Loop() {
			s.ResetRequests()
			r := httptest.NewRequest(method, "http://127.0.0.1"+BasePath+path, strings.NewReader(body))
			r.Header.Set("Authorization", auth)
			w := httptest.NewRecorder()
			s.ServeHTTP(w, r)
			if w.Code >= 300 {
				b.Fatalf("%d %s", w.Code, w.Body)
			}
		}
	}
	b.Run("get_rrset", func(b *testing.B) { run(b, "GET", "/zones/example.com/rrsets/h100/A", "") })
	b.Run("list_rrsets_100", func(b *testing.B) { run(b, "GET", "/zones/example.com/rrsets?per_page=100", "") })
	b.Run("set_records", func(b *testing.B) {
		run(b, "POST", "/zones/example.com/rrsets/h100/A/actions/set_records", `{"records":[{"value":"192.0.2.7"}]}`)
	})
}

// BenchmarkLoopback measures a GET through a real loopback connection.
func BenchmarkLoopback(b *testing.B) {
	s := Start(b, &Options{DisableRateLimit: true})
	if _, err := s.AddZone(ZoneSeed{Name: "example.com"}); err != nil {
		b.Fatal(err)
	}
	req, _ := http.NewRequest("GET", s.URL()+"/zones/example.com/rrsets/@/NS", nil)
	req.Header.Set("Authorization", "Bearer "+s.Token())
	for b.Loop() {
		s.ResetRequests()
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 200 {
			b.Fatalf("status %d", res.StatusCode)
		}
	}
}
