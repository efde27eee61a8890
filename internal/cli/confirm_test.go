package cli

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/internal/fake/hetznerapi"
)

// TestConfirmFlag: -confirm reaches the kernel. Over stdio, a client that
// declares elicitation is asked in auto mode (and the zone goes only once
// it accepts), never in token mode; elicit mode refuses a client that
// cannot be asked.
func TestConfirmFlag(t *testing.T) {
	cases := []struct {
		mode       string
		elicits    bool
		wantAsked  bool
		wantGone   bool
		wantInText string
	}{
		{"", true, true, true, `"command":"delete_zone","status":"success"`},
		{"auto", false, false, false, "confirmToken"},
		{"token", true, false, false, "confirmToken"},
		{"elicit", false, false, false, "did not declare form elicitation"},
	}
	for _, c := range cases {
		t.Run(c.mode+"/"+map[bool]string{true: "elicits", false: "plain"}[c.elicits], func(t *testing.T) {
			api := hetznerapi.Start(t, nil)
			if _, err := api.AddZone(hetznerapi.ZoneSeed{Name: "example.com"}); err != nil {
				t.Fatal(err)
			}
			asked := 0
			var copts *mcp.ClientOptions
			if c.elicits {
				copts = &mcp.ClientOptions{ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					asked++
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}, nil
				}}
			}
			args := []string{"-provider", "hetzner"}
			if c.mode != "" {
				args = append(args, "-confirm", c.mode)
			}
			cs, _, stderr := sessionWith(t, copts, map[string]string{"HETZNER_API_TOKEN": api.Token(), "HETZNER_API_BASE_URL": api.URL()}, args...)
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "delete_zone", Arguments: map[string]any{"zone": "example.com"}})
			if err != nil {
				t.Fatalf("%v\n%s", err, stderr.String())
			}
			var text strings.Builder
			for _, ct := range res.Content {
				text.WriteString(ct.(*mcp.TextContent).Text)
			}
			_, exists := api.Zone("example.com")
			if (asked == 1) != c.wantAsked || exists == c.wantGone || !strings.Contains(text.String(), c.wantInText) {
				t.Fatalf("asked %d, zone exists %v, result %s", asked, exists, text.String())
			}
		})
	}
}
