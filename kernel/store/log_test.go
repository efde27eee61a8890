package store_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/bulwarkmcp/bulwark/kernel/store"
)

// TestClientLogRoutedAtDebug: with the Redis down, go-redis's own lines
// (a failed dial on every command) go through our logger at debug level
// and nowhere else, so at the default level a refused call adds none of
// them beside the kernel's one line per outage; at debug they are there,
// without the password.
func TestClientLogRoutedAtDebug(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	const password = "hunter2-not-logged"
	calls := func(level slog.Level) string {
		var buf bytes.Buffer
		store.RouteClientLog(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: level})))
		e, err := store.ParseURL("redis://"+addr+"/0", password)
		if err != nil {
			t.Fatal(err)
		}
		c := e.NewClient()
		defer c.Close()
		for range 2 {
			ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
			if err := c.Get(ctx, "k").Err(); err == nil {
				t.Fatal("a GET reached a closed port")
			}
			cancel()
		}
		return buf.String()
	}
	t.Cleanup(func() { store.RouteClientLog(slog.New(slog.NewTextHandler(io.Discard, nil))) })
	if out := calls(slog.LevelInfo); out != "" {
		t.Errorf("at info, the library's lines came through:\n%s", out)
	}
	out := calls(slog.LevelDebug)
	if !strings.Contains(out, "redis client") || !strings.Contains(out, "dial") {
		t.Errorf("at debug, the library's failed dials are not in our log:\n%s", out)
	}
	if strings.Contains(out, password) {
		t.Errorf("the password is in the log:\n%s", out)
	}
}
