package rfc2136_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	mdns "github.com/miekg/dns"

	"github.com/bulwarkmcp/bulwark/internal/fake/realdns"
	"github.com/bulwarkmcp/bulwark/kernel/mcptest"
	"github.com/bulwarkmcp/bulwark/servers/dns/rfc2136"
)

// benchZone is a zone of n A records besides the SOA and NS.
func benchZone(n int) string {
	var b strings.Builder
	b.WriteString(zoneText)
	for i := range n {
		fmt.Fprintf(&b, "host%06d.example.com. 3600 IN A 10.%d.%d.%d\n", i, i>>16&255, i>>8&255, i&255)
	}
	return b.String()
}

// BenchmarkAXFRIn: the provider reads a 100,000-record zone from BIND by
// AXFR under the zone-file budget (every record charged, TSIG checked on
// every message, the zone built), against a bare miekg/dns transfer of the
// same zone that only counts the records, alternating in one run; ratio-x
// is the bare transfer's time over the provider's (1 would be no cost
// above receiving). Run:
//
//	go test -run '^$' -bench AXFRIn -benchtime 6x ./servers/dns/rfc2136
func BenchmarkAXFRIn(b *testing.B) {
	const records = 100_000
	s := realdns.StartBIND(b, realdns.Config{Key: realKey, Zones: []realdns.Zone{{Name: zone, Text: benchZone(records)}}}, false)
	want := records + 9
	var ours, bare time.Duration
	for range b.N {
		start := time.Now()
		p := newProvider(b, s.Addr, testKey(b), func(o *rfc2136.Options) { o.Timeout = 30 * time.Second })
		z, err := p.GetZone(ctx(), zone)
		if err != nil || z.RecordCount != want {
			b.Fatalf("read %d records, %v; want %d", z.RecordCount, err, want)
		}
		ours += time.Since(start)
		start = time.Now()
		if n := bareAXFR(b, s.Addr); n != want+1 {
			b.Fatalf("bare transfer: %d records", n)
		}
		bare += time.Since(start)
	}
	b.ReportMetric(bare.Seconds()/ours.Seconds(), "ratio-x")
	b.ReportMetric(ours.Seconds()*1000/float64(b.N), "provider-ms/zone")
	b.ReportMetric(bare.Seconds()*1000/float64(b.N), "bare-ms/zone")
}

func bareAXFR(b *testing.B, addr string) int {
	m := new(mdns.Msg)
	m.SetAxfr(zone + ".")
	m.SetTsig(keyName, mdns.HmacSHA256, 300, time.Now().Unix())
	ch, err := (&mdns.Transfer{TsigSecret: map[string]string{keyName: secret}, ReadTimeout: 30 * time.Second}).In(m, addr)
	if err != nil {
		b.Fatal(err)
	}
	n := 0
	for env := range ch {
		if env.Error != nil {
			b.Fatal(env.Error)
		}
		n += len(env.RR)
	}
	return n
}

// BenchmarkWriteVsNsupdate: one record added through the add_records tool
// (an MCP call through the kernel to the provider: an SOA query, a
// transfer of what changed, a signed UPDATE with its prerequisites)
// against the same kind of change made by BIND's nsupdate, alternating,
// on BIND. ratio-x is nsupdate's time over the tool's. Run:
//
//	go test -run '^$' -bench WriteVsNsupdate -benchtime 50x ./servers/dns/rfc2136
func BenchmarkWriteVsNsupdate(b *testing.B) {
	nsupdate := realdns.Tool(b, "nsupdate")
	s := realdns.StartBIND(b, realdns.Config{Key: realKey, Zones: []realdns.Zone{{Name: zone, Text: zoneText}}}, false)
	keyFile := filepath.Join(b.TempDir(), "tsig.key")
	if err := os.WriteFile(keyFile, []byte(fmt.Sprintf("key %q { algorithm hmac-sha256; secret %q; };\n", keyName, secret)), 0o600); err != nil {
		b.Fatal(err)
	}
	sess := session(b, newProvider(b, s.Addr, testKey(b), nil))
	host, port, _ := strings.Cut(s.Addr, ":")
	var tool, nsu time.Duration
	for i := range b.N {
		start := time.Now()
		res := sess.Call(b, "add_records", map[string]any{"zone": zone, "name": fmt.Sprintf("t%d", i), "type": "A", "records": recs("198.51.100.1")})
		if res.IsError {
			b.Fatal(mcptest.Text(res))
		}
		tool += time.Since(start)
		start = time.Now()
		cmd := exec.Command(nsupdate, "-k", keyFile)
		cmd.Stdin = strings.NewReader(fmt.Sprintf("server %s %s\nzone %s\nprereq nxrrset n%d.%s. A\nupdate add n%d.%s. 3600 A 198.51.100.1\nsend\n",
			host, port, zone, i, zone, i, zone))
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("nsupdate: %v\n%s", err, out)
		}
		nsu += time.Since(start)
	}
	b.ReportMetric(nsu.Seconds()/tool.Seconds(), "ratio-x")
	b.ReportMetric(tool.Seconds()*1000/float64(b.N), "tool-ms/op")
	b.ReportMetric(nsu.Seconds()*1000/float64(b.N), "nsupdate-ms/op")
}
