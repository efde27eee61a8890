package gateway

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestProgressTokens: a token's key reads back only from exactly the text
// the gateway sends, so an upstream's progress reaches the call it names and
// no other.
func TestProgressTokens(t *testing.T) {
	for _, k := range []tokKey{{n: 1}, {n: 42, relay: true}, {n: 1<<64 - 1}, {n: 0, relay: true}} {
		got, ok := parseTok(k.String())
		if !ok || got != k {
			t.Fatalf("%q: read back as %+v, %v", k.String(), got, ok)
		}
	}
	if s := (tokKey{n: 7}).String(); s != "bulwark-7" {
		t.Fatalf("call token %q", s)
	}
	if s := (tokKey{n: 7, relay: true}).String(); s != "bulwark-relay-7" {
		t.Fatalf("relay token %q", s)
	}
	for _, bad := range []string{"", "bulwark-", "bulwark-07", "bulwark-+7", "bulwark--7", "bulwark-7 ", " bulwark-7", "bulwark-0x7",
		"bulwark-relay-", "bulwark-relay-07", "bulwark-relay-x", "bulwark-1_000", "Bulwark-7", "bulwark-18446744073709551616", "7"} {
		if k, ok := parseTok(bad); ok {
			t.Errorf("%q read as %+v", bad, k)
		}
	}
}

// TestRelayParams: the params a relayed call sends carry the progress token
// as the go-sdk's SetProgressToken writes it, and the log level.
func TestRelayParams(t *testing.T) {
	for _, rp := range []relayParams{{name: "t", tok: "bulwark-3", progress: true}, {name: "t", tok: "bulwark-3", progress: true, logLevel: "info"},
		{name: "t", logLevel: "info"}, {name: "t", logLevel: "debug"}, {name: "t", logLevel: "nonsense"}, {name: "t"}} {
		rp.args = json.RawMessage(`{"a":1}`)
		want := &mcp.CallToolParams{Name: rp.name, Arguments: rp.args}
		if rp.progress {
			want.SetProgressToken(rp.tok)
		}
		if rp.logLevel != "" {
			if want.Meta == nil {
				want.Meta = mcp.Meta{}
			}
			want.Meta[mcp.MetaKeyLogLevel] = string(rp.logLevel)
		}
		got := rp.params()
		if !reflect.DeepEqual(&got, want) {
			t.Fatalf("%+v: %+v, want %+v", rp, got, want)
		}
		if got.GetProgressToken() != want.GetProgressToken() {
			t.Fatalf("%+v: progress token %v", rp, got.GetProgressToken())
		}
	}
}
