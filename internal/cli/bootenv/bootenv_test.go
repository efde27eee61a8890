package bootenv

import (
	"maps"
	"slices"
	"testing"
)

func TestCheckDebug(t *testing.T) {
	for v, ok := range map[string]bool{
		"": true, "a=1": true, "a=1,b=0": true, "a=": true,
		"a": false, "a=1,b": false, ",": false, "a=1,": false,
	} {
		if err := CheckDebug(v); (err == nil) != ok {
			t.Errorf("CheckDebug(%q) = %v", v, err)
		}
	}
}

func TestHandoverRoundTrip(t *testing.T) {
	in := map[string]string{"HETZNER_API_TOKEN": "t=ok", "BULWARK_REDIS_URL": "redis://:p@h:1/0", "MCP_AEAD_KEY": ""}
	out := map[string]string{}
	if err := decode(encode(in), out); err != nil || !maps.Equal(in, out) {
		t.Fatalf("%v %v", out, err)
	}
	// Only names on the list are accepted from a hand-over.
	for _, p := range []string{"PATH=/evil\x00", "HETZNER_API_TOKEN\x00"} {
		if err := decode([]byte(p), map[string]string{}); err == nil {
			t.Errorf("decode(%q) accepted", p)
		}
	}
}

func TestWithoutSecrets(t *testing.T) {
	got := withoutSecrets([]string{"PATH=/bin", "HETZNER_API_TOKEN=x", fdVar + "=3", "HETZNER_API_TOKEN_X=keep", "MCP_AEAD_KEY=k"})
	if want := []string{"PATH=/bin", "HETZNER_API_TOKEN_X=keep"}; !slices.Equal(got, want) {
		t.Fatalf("%v", got)
	}
}
