package rustpad_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/bulwarkmcp/bulwark/kernel"
)

// The kernel scrubs a credential the server holds from every server's
// results: here a pad (anyone can write one) echoes it, raw and split by
// zero-width characters that the envelope removes (issue 10.4).
func TestPadEchoingACredentialIsScrubbed(t *testing.T) {
	const secret = "rpTOKEN-Zq81Vw7Kd3Lm9Xs2"
	f := newFixture(t, setup{kopts: kernel.Options{Credentials: []kernel.Credential{{Name: "gate", Provider: "Gateway", Value: secret}}}})
	seed(t, f, "pad", "token: "+secret+"\nagain: "+strings.Join(strings.Split(secret, ""), "\u200b")+"\n")
	for _, tool := range []string{"get_document", "append_to_document"} {
		args := map[string]any{"id": "pad"}
		if tool == "append_to_document" {
			args["text"] = "!"
		}
		res := f.call(t, tool, args)
		wire, _ := json.Marshal(res)
		if res.IsError || strings.Contains(string(wire), secret[:10]) {
			t.Fatalf("%s: %s", tool, wire)
		}
		if tool == "get_document" && strings.Count(string(wire), "[redacted]") < 2 {
			t.Fatalf("%s: not scrubbed: %s", tool, wire)
		}
	}
}
