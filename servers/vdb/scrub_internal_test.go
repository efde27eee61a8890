package vdb

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/bulwarkmcp/bulwark/internal/fake/vdbapi"
	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/identity"
)

// TestEchoNeverReachesTheCache: an upstream answer that echoes the
// credential — as it is, base64-encoded (an "Authorization" value quoted
// back), cut to a prefix before "…", or written with JSON escapes — is
// scrubbed with the egress gate's matcher (kernel.Call.ScrubJSON) before the
// fetch layer decodes or caches it. What get returns is what the cache
// keeps. The key's digest alone is a secret only the server knows; the
// server registers it with the call.
func TestEchoNeverReachesTheCache(t *testing.T) {
	fake := vdbapi.Start(t, nil)
	key := fake.AddKey(vdbapi.OrgA, "secret-a")
	_, digest, _ := strings.Cut(key, ":")
	echoes := []string{
		digest,
		base64.StdEncoding.EncodeToString([]byte("Authorization: ApiKey " + key)),
		base64.StdEncoding.EncodeToString([]byte(digest)),
		digest[:12] + "…",
	}
	body, _ := json.Marshal(map[string]any{"id": vdbapi.Log4Shell, "notes": echoes})
	var escaped strings.Builder // the whole key, every character a \u escape
	for _, r := range key {
		fmt.Fprintf(&escaped, `\u%04x`, r)
	}
	body = append(body[:len(body)-1], `,"escaped":"`+escaped.String()+`","split":"`+strings.Join(strings.Split(digest, ""), `\u200b`)+`"}`...)
	fake.AddFault(vdbapi.Fault{Kind: vdbapi.FaultRaw, ContentType: "application/json", Body: string(body), Times: 1})
	s := overFake(t, fake, key, 0)
	call := &kernel.Call{Principal: identity.Principal{ID: "alice"}}
	f, err := s.get(context.Background(), call, []string{"vuln", vdbapi.Log4Shell, "kev"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !json.Valid(f.body) {
		t.Fatalf("the scrubbed answer is not JSON: %s", f.body)
	}
	got := string(f.body)
	for _, e := range append(echoes, digest[:12], base64.RawStdEncoding.EncodeToString([]byte(digest))[:16]) {
		if strings.Contains(got, strings.TrimSuffix(e, "…")) {
			t.Errorf("the answer kept for the cache holds %q: %s", e, got)
		}
	}
	if n := strings.Count(got, "[redacted]"); n < len(echoes)+2 {
		t.Errorf("%d redactions in %s", n, got)
	}
}
