package kernel_test

import (
	"testing"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/mcptest"
)

// TestGoldenTranscripts pins the wire form of the security behaviour: each
// case's JSON-RPC messages are compared with testdata/transcripts/*.txtar.
// Regenerate with UPDATE_GOLDEN=1 go test ./kernel -run Golden.
func TestGoldenTranscripts(t *testing.T) {
	item := map[string]any{"zone": "example.com", "name": "www"}
	recsA := map[string]any{"zone": "example.com", "records": []any{map[string]any{"value": "198.51.100.1"}}}
	recsB := map[string]any{"zone": "example.com", "records": []any{map[string]any{"value": "198.51.100.66"}}}
	cases := []struct {
		name, comment string
		steps         func(t *testing.T, s *mcptest.Session) []string
	}{
		{"confirmation_flow", "A gated tool refuses its first call with a token; the same call with the token runs.",
			func(t *testing.T, s *mcptest.Session) []string {
				tok := token(t, s.Call(t, "delete_item", item))
				s.Call(t, "delete_item", with(item, "confirmToken", tok))
				return nil
			}},
		{"replayed_token", "A token works once: the replay is refused with a fresh token.",
			func(t *testing.T, s *mcptest.Session) []string {
				tok := token(t, s.Call(t, "delete_item", item))
				s.Call(t, "delete_item", with(item, "confirmToken", tok))
				s.Reset()
				s.Call(t, "delete_item", with(item, "confirmToken", tok))
				return nil
			}},
		{"token_for_another_payload", "A token obtained for one record list does not execute another.",
			func(t *testing.T, s *mcptest.Session) []string {
				tok := token(t, s.Call(t, "set_records", recsA))
				s.Reset()
				s.Call(t, "set_records", with(recsB, "confirmToken", tok))
				return nil
			}},
		{"injection_in_envelope", "Upstream text with an instruction and a closing tag stays inside the envelope; secrets are redacted.",
			func(t *testing.T, s *mcptest.Session) []string {
				s.Call(t, "get_item", item)
				s.Call(t, "export_item", item)
				return nil
			}},
		{"truncated_result", "A long value is cut with its length.",
			func(t *testing.T, s *mcptest.Session) []string {
				s.Call(t, "list_items", map[string]any{"count": 1})
				return nil
			}},
		{"internal_error", "A Go error becomes internal with an id; no detail reaches the client.",
			func(t *testing.T, s *mcptest.Session) []string {
				s.Call(t, "broken", item)
				return nil
			}},
		{"upstream_error", "An upstream's error text reaches the client only enveloped.",
			func(t *testing.T, s *mcptest.Session) []string {
				s.Call(t, "refused_upstream", item)
				return nil
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, kernel.Options{})
			c.steps(t, f.sess)
			mcptest.Golden(t, "testdata/transcripts/"+c.name+".txtar", c.comment,
				map[string]string{"wire": f.sess.Transcript()}, []string{"wire"})
		})
	}
}
