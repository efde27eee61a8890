package rustpad_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/bulwarkmcp/bulwark/servers/rustpad/ot"
	"github.com/bulwarkmcp/bulwark/servers/rustpad/session"
)

// The two texts of the benchmark: 262,144 code points each (ASCII and a
// four-byte emoji), different in their first and last character, so the
// whole pad is replaced.
var (
	benchOld = strings.Repeat("abcdefgh🎉ijklmno", session.DefaultMaxDocument/16)
	benchNew = strings.Repeat("ponmlkji🎉hgfedcb", session.DefaultMaxDocument/16)
)

// BenchmarkSetDocument256Ki replaces a full pad (256 Ki code points) with
// another, through the tool (refusal with a token, then the confirmed call:
// three reads of the pad and one edit, through the kernel and the MCP
// in-memory transport) and, in the same iteration, with a plain session:
// Dial, Edit of the same operation, Close. It reports both and their ratio.
func BenchmarkSetDocument256Ki(b *testing.B) {
	f := newFixture(b, setup{})
	args := map[string]any{"id": "bench", "text": benchNew}
	var tool, plain time.Duration
	b.ReportAllocs()
	for b.Loop() {
		restore(b, f, "bench")
		start := time.Now()
		f.confirmed(b, "set_document", args, nil)
		tool += time.Since(start)

		restore(b, f, "bench")
		start = time.Now()
		editPlain(b, f.url, "bench")
		plain += time.Since(start)
	}
	if got := f.peer.Text("bench"); got != benchNew {
		b.Fatal("the pad does not hold the new text")
	}
	n := float64(b.N)
	b.ReportMetric(float64(tool.Nanoseconds())/n, "tool-ns/op")
	b.ReportMetric(float64(plain.Nanoseconds())/n, "session-ns/op")
	b.ReportMetric(float64(tool)/float64(plain), "tool/session")
}

// restore makes the pad hold benchOld as one restored operation, once the
// previous iteration's connections are gone.
func restore(b *testing.B, f *fixture, pad string) {
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(100 * time.Microsecond) {
		if err := f.peer.Restore(pad, benchOld); err == nil {
			return
		} else if time.Now().After(deadline) {
			b.Fatal(err)
		}
	}
}

func editPlain(b *testing.B, url, pad string) {
	ctx := context.Background()
	s, err := session.Dial(ctx, url, pad, &session.Options{Name: "bulwark", Hue: 200})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	st, err := s.State()
	if err != nil {
		b.Fatal(err)
	}
	op := ot.New().Delete(st.Length).Insert(benchNew)
	if _, err := s.Edit(ctx, st.Revision, op); err != nil {
		b.Fatal(err)
	}
}
