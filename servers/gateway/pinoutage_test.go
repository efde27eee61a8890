package gateway_test

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bulwarkmcp/bulwark/servers/gateway"
)

// failingPinner fails every check while down, as a pin store whose Redis
// is unreachable does, and allows every definition once it is up.
type failingPinner struct {
	mu   sync.Mutex
	down bool
}

func (p *failingPinner) Check(string, json.RawMessage) (string, bool, string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.down {
		return "", false, "", errors.New("store: reading the pins: dial tcp 127.0.0.1:6379: connect: connection refused")
	}
	return "h1", true, "", nil
}

// TestPinStoreOutageIsStoreUnavailable: a tool whose definition could not
// be checked because the pin store was down at listing is not offered,
// its call answers store_unavailable (not failed_precondition: nothing is
// wrong with the tool), and it comes back by itself once the store
// answers, without the upstream listing again.
func TestPinStoreOutageIsStoreUnavailable(t *testing.T) {
	defer gateway.SetRecheckAfter(50 * time.Millisecond)()
	p := &failingPinner{down: true}
	f := newFixture(t, options{pinner: p})
	if names := toolNames(t, f); len(names) != 0 {
		t.Fatalf("unchecked tools are listed: %v", names)
	}
	res := f.sess.Call(t, "fake.echo", map[string]any{"text": "x"})
	wantError(t, res, "store_unavailable")
	if !strings.Contains(text(res), "shared state store is unreachable") || strings.Contains(text(res), "6379") {
		t.Errorf("the refusal does not say why, or names the store's address: %s", text(res))
	}
	time.Sleep(150 * time.Millisecond) // rechecks while still down change nothing
	wantError(t, f.sess.Call(t, "fake.echo", map[string]any{"text": "x"}), "store_unavailable")

	p.mu.Lock()
	p.down = false
	p.mu.Unlock()
	deadline := time.Now().Add(5 * time.Second)
	for !slices.Contains(toolNames(t, f), "fake.echo") {
		if time.Now().After(deadline) {
			t.Fatal("the tool did not come back once the store answered")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if res := f.sess.Call(t, "fake.echo", map[string]any{"text": "x"}); res.IsError {
		t.Fatalf("call after recovery: %s", text(res))
	}
}
