package kernel_test

import (
	"encoding/json"
	"regexp"
	"testing"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/internal/errorid"
	"github.com/bulwarkmcp/bulwark/kernel/mcptest"
)

// TestOneErrorIDFormat: the id of an internal tool error and the id of an
// authentication refusal have one format, so an operator finds either in
// the log the same way.
func TestOneErrorIDFormat(t *testing.T) {
	format := regexp.MustCompile(`^` + errorid.Pattern + `$`)

	f := newFixture(t, kernel.Options{})
	var tool struct {
		Error struct{ ID string } `json:"error"`
	}
	mcptest.Structured(t, f.sess.Call(t, "broken", map[string]any{"zone": "z", "name": "n"}), &tool)

	h := newHTTPFixture(t, 100, false)
	resp, body := post(t, h.url, callBody("whoami", map[string]any{"zone": "z", "name": "n"}), nil)
	var refusal struct{ ID string }
	if resp.StatusCode != 401 || json.Unmarshal([]byte(body), &refusal) != nil {
		t.Fatalf("refusal: %d %s", resp.StatusCode, body)
	}
	if !format.MatchString(tool.Error.ID) || !format.MatchString(refusal.ID) {
		t.Fatalf("tool error id %q, refusal id %q: want both to match %s", tool.Error.ID, refusal.ID, errorid.Pattern)
	}
}
