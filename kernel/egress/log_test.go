package egress_test

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/bulwarkmcp/bulwark/kernel/egress"
)

type stringer string

func (s stringer) String() string { return string(s) }

// TestLogHandlerScrubsEveryPart: a secret in a record's message, a string
// attribute, an error, a fmt.Stringer, a group at depth and a value
// registered after the handler was made never reaches the log, in any form
// the gate finds (here split by zero-width spaces).
func TestLogHandlerScrubsEveryPart(t *testing.T) {
	const late = "late-registered-secret-0042"
	var buf bytes.Buffer
	sec := egress.NewSecrets(key)
	log := slog.New(egress.LogHandler(slog.NewTextHandler(&buf, nil), func() *egress.Secrets { return sec }))
	split := strings.Join(strings.Split(key, ""), "\u200b")
	log.Info("upstream said "+key,
		"plain", "x "+key,
		"split", split,
		"err", errors.New("401: "+key),
		"stringer", stringer("v="+key),
		slog.Group("outer", slog.Group("inner", "deep", key)))
	sec = sec.With(late)
	log.Warn("later", "value", late)
	out := buf.String()
	for _, leak := range []string{key, late} {
		if strings.Contains(out, leak) {
			t.Fatalf("the log holds a secret:\n%s", out)
		}
	}
	if strings.Count(out, egress.Redacted) < 7 {
		t.Fatalf("want every part redacted:\n%s", out)
	}
}
