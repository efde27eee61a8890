package cli

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/bulwarkmcp/bulwark/servers/gateway/pin"
)

// pinID names the gateway whose pins these are: the absolute path of its
// configuration file, or its one server's command line.
func (c *gatewayFlags) pinID() (string, error) {
	if c.config != "" {
		return filepath.Abs(c.config)
	}
	words := make([]string, len(c.args))
	for i, a := range c.args {
		words[i] = strconv.Quote(a)
	}
	return strings.Join(words, " "), nil
}

// pinStore is the gateway's pin store: in Redis when the replicas of a
// configuration file share a store (-redis-url-file with -config), else a
// file in the data directory (a gateway given by -- is one local server,
// and `approve` could not name its Redis key); trust on
// first use unless -require-approval. close releases it.
func (c *gatewayFlags) pinStore(env Env, logger *slog.Logger) (st *pin.Store, close func(), err error) {
	id, err := c.pinID()
	if err != nil {
		return nil, nil, err
	}
	opts := &pin.Options{Logger: logger, AllowFlaggedDefinitions: c.allowFlagged}
	if c.requireApproval {
		opts.Mode = pin.RequireApproval
	}
	if c.redisClient != nil && c.config != "" {
		st, err := redisPins(c.redisClient, id, opts)
		return st, func() {}, err
	}
	dir := gatewayDataDir(c.dataDir, env)
	if dir == "" {
		return nil, nil, fmt.Errorf("%w: no data directory for the tool pins: set -data-dir (HOME is not set)", errUsage)
	}
	path, err := pin.PathFor(dir, id)
	if err != nil {
		return nil, nil, err
	}
	if st, err = pin.Open(path, opts); err != nil {
		return nil, nil, fmt.Errorf("tool pins: %w", err)
	}
	logger.Info("tool pins", "file", path, "require_approval", c.requireApproval)
	return st, func() {}, nil
}

// redisPins is the pin store of the gateway id in the Redis of client
// (the process's shared-state client, which the caller keeps): one key per
// gateway, so gateways that share a Redis never share pins.
func redisPins(client redis.UniversalClient, id string, opts *pin.Options) (*pin.Store, error) {
	sum := sha256.Sum256([]byte(id))
	return pin.OpenRedis(client, "bulwark:gateway:pins:"+hex.EncodeToString(sum[:12]), 2*time.Second, opts)
}

// gatewayDataDir is the gateway's data directory: -data-dir, else
// pin.DefaultDir of the environment; "" when neither gives one. The gateway
// and `bulwark gateway approve` must agree on it, so both call this.
func gatewayDataDir(flag string, env Env) string {
	if flag != "" {
		return flag
	}
	getenv := env.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	return pin.DefaultDir(getenv)
}
