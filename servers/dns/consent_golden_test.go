package dns_test

import (
	"context"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/confirm"
	"github.com/bulwarkmcp/bulwark/kernel/mcptest"
)

// TestGoldenConsentByElicitation pins the wire form of consent by
// elicitation for delete_zone on both protocol generations: on 2025-11-25
// the server asks with a real elicitation/create request on the session;
// on 2026-07-28 it answers input_required and the client retries with the
// answer and the sealed requestState. The person first declines (the zone
// stays), then accepts (the zone goes). No token appears on either wire.
func TestGoldenConsentByElicitation(t *testing.T) {
	for _, c := range []struct{ name, version, comment string }{
		{"delete_zone_consent_2025", "2025-11-25", "2025-11-25 session: delete_zone asks the person with elicitation/create (preview counts, target, cannot be undone); a decline changes nothing, an accept deletes the zone."},
		{"delete_zone_consent_2026", "", "2026-07-28: delete_zone answers input_required with the question and a sealed requestState; the retry with decline changes nothing, a fresh round with accept deletes the zone."},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, fixedLocal, setup{before: standard(t),
				kopts: kernel.Options{Confirm: confirm.NewIssuer(nil, &confirm.Options{Rand: &mcptest.CountingReader{}})}})
			var mu sync.Mutex
			answers := []string{"decline", "accept"}
			sess := mcptest.Connect(t, f.k, &mcptest.Options{ProtocolVersion: c.version, Client: &mcp.ClientOptions{
				ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					mu.Lock()
					defer mu.Unlock()
					a := answers[0]
					answers = answers[1:]
					if a == "decline" {
						return &mcp.ElicitResult{Action: a}, nil
					}
					return &mcp.ElicitResult{Action: a, Content: map[string]any{"confirm": true}}, nil
				},
			}})
			zone := map[string]any{"zone": "example.com"}
			if res := sess.Call(t, "delete_zone", zone); !res.IsError {
				t.Fatalf("a declined delete ran: %s", mcptest.Text(res))
			}
			if _, err := f.backend.p.GetZone(ctx(), "example.com"); err != nil {
				t.Fatalf("the zone went after a decline: %v", err)
			}
			if res := sess.Call(t, "delete_zone", zone); res.IsError {
				t.Fatalf("an accepted delete failed: %s", mcptest.Text(res))
			}
			if _, err := f.backend.p.GetZone(ctx(), "example.com"); err == nil {
				t.Fatal("the zone stayed after an accept")
			}
			mcptest.Golden(t, "testdata/transcripts/"+c.name+".txtar", c.comment,
				map[string]string{"wire": sess.Transcript(mcptest.Normalize(`"requestState": "[A-Za-z0-9_-]+"`, `"requestState": "<sealed>"`))}, []string{"wire"})
		})
	}
}
