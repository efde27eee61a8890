package kernel

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestFrontModernMetaRemembers: the front's modernMeta answers as
// modernMeta for every _meta, in any order (an accepted one does not make a
// different one accepted, a refused one is not remembered), and a repeated
// accepted _meta costs no allocation (it was decoded and re-encoded on
// every call).
func TestFrontModernMetaRemembers(t *testing.T) {
	good := json.RawMessage(`{"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`)
	metas := []json.RawMessage{
		good,
		json.RawMessage(`{"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"}}`), // no capabilities
		good,
		json.RawMessage(`{"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":"x"}`),
		json.RawMessage(`{"io.modelcontextprotocol/clientCapabilities":null}`),
		json.RawMessage(`{"io.modelcontextprotocol/clientCapabilities":{}}`),
		json.RawMessage(`{"io.modelcontextprotocol/clientCapabilities":{}}`),
		json.RawMessage(good[:len(good)-1]), // truncated
		json.RawMessage(``),
		json.RawMessage(`null`),
		json.RawMessage(`{"io.modelcontextprotocol/clientCapabilities":{"x":"` + strings.Repeat("a", 5000) + `"}}`),
		json.RawMessage(`{"io.modelcontextprotocol/clientCapabilities":{"x":"` + strings.Repeat("a", 5000) + `"}}`),
		json.RawMessage(`{"io.modelcontextprotocol/clientCapabilities":{"roots":1}}`),
		good,
	}
	f := &stdioFront{}
	for round := range 2 {
		for i, m := range metas {
			if got, want := f.modernMeta(m), modernMeta(m); got != want {
				t.Fatalf("round %d, _meta %d (%.80s): front says %v, modernMeta %v", round, i, m, got, want)
			}
		}
	}
	if !modernMeta(good) {
		t.Fatal("the test's good _meta is refused")
	}
	f.modernMeta(good)
	if n := testing.AllocsPerRun(100, func() { f.modernMeta(good) }); n != 0 {
		t.Fatalf("a repeated _meta allocates %v times, want 0", n)
	}
	// The remembered bytes are the front's own: a reused read buffer
	// changing under it does not make what it holds accepted.
	buf := append([]byte(nil), good...)
	f.modernMeta(buf)
	copy(buf, `{"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"}}`+strings.Repeat(" ", len(buf)-len(`{"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"}}`)))
	if f.modernMeta(buf) != modernMeta(buf) {
		t.Fatal("the front kept a reference to the caller's bytes")
	}
}
