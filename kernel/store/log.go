package store

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/redis/go-redis/v9"
)

// RouteClientLog sends go-redis's own log lines (the library's one
// process-wide logger, redis.SetLogger) to logger at debug level. The
// library writes several lines for every command that meets an outage (a
// failed dial, each retry); the kernel already says an outage once when it
// starts and once when it ends, with the error, so at the default level
// an outage costs those two lines and no more, and -log-level debug shows
// the library's detail. The lines name addresses and errors, never a
// password.
func RouteClientLog(logger *slog.Logger) {
	redis.SetLogger(clientLog{logger})
}

// clientLog is the go-redis logger RouteClientLog installs.
type clientLog struct{ l *slog.Logger }

// Printf implements go-redis's internal.Logging.
func (c clientLog) Printf(ctx context.Context, format string, v ...any) {
	if !c.l.Enabled(ctx, slog.LevelDebug) {
		return
	}
	c.l.DebugContext(ctx, "redis client", "line", fmt.Sprintf(format, v...))
}
