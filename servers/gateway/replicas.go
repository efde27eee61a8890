package gateway

// Parked calls across replicas (issue 32). A parked upstream call (relay.go)
// lives in the upstream session of the replica that asked; the client's
// answer may reach another one behind a load balancer. With ShareParked,
// the replica that parks a call records in the shared store which replica
// holds it, and a replica that gets an answer for a call it does not hold
// looks the record up and the kernel forwards the client's own request
// there (kernel/stateroute.go: the holder authenticates, admits, verifies
// and spends it itself, so no new trust between replicas and no second run).
//
// The record's key is a digest of the parked call's id (never the id, nor
// the requestState); its value is the holder's advertised URL sealed with
// the requestState key the replicas share, under its own purpose and bound
// to the key, so a value written by anyone without that key — or copied
// from another call's record — does not open and is never followed: the
// store cannot be made to point a replica, and the client's credentials it
// forwards, at an address of an attacker's choice. An opened URL must also
// be an http(s) MCP endpoint without credentials or query. The record
// expires with the park wait and is removed when the call resumes or ends.
//
// A store that fails when a call parks fails the call with
// store_unavailable (the question is not asked: its answer could not be
// found by another replica); one that fails at lookup refuses the answer
// with store_unavailable (kernel). A missing record (expired, the holder
// gone without removing it, a replica without ShareParked) leaves the
// answer to this replica, which answers as before: the question is no
// longer open, call again without requestState.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/seal"
)

// purposeParkedRecord is the seal purpose of a parked call's record: it
// never opens as a requestState, nor a requestState as a record.
const purposeParkedRecord = "bulwark-gateway-parked-replica"

// defaultStoreTimeout bounds one round trip to the store.
const defaultStoreTimeout = 2 * time.Second

// Replicas share the gateway's parked calls (ShareParked).
type Replicas struct {
	// Redis is the store every replica shares (BULWARK_REDIS_URL).
	Redis redis.UniversalClient
	// KeyPrefix starts every parked call's record's key
	// ("bulwark:gateway:parked:").
	KeyPrefix string
	// TaskKeyPrefix starts the key of every principal's task records
	// (replicatasks.go); KeyPrefix + "tasks:" when empty.
	TaskKeyPrefix string
	// Advertise is this replica's MCP endpoint as the other replicas reach
	// it (http(s)://HOST:PORT/mcp).
	Advertise string
	// Sealer is the requestState sealer every replica shares
	// (--request-state-key-file): it seals the records.
	Sealer *seal.Sealer
	// Timeout bounds one store round trip; 2 s when zero.
	Timeout time.Duration
}

// sharing is the validated Replicas.
type sharing struct {
	Replicas
	advertise *url.URL
}

// ShareParked makes the gateway record its parked calls and its tasks in
// r.Redis, route answers for calls and requests for tasks another replica
// holds (RouteState, RouteTask; the kernel needs Options.StateRouter set to
// the gateway), and list every replica's tasks (replicatasks.go). Call it
// before serving.
func (g *Gateway) ShareParked(r Replicas) error {
	if r.Redis == nil || r.Sealer == nil {
		return fmt.Errorf("%w: sharing parked calls needs the shared store and the shared requestState key", ErrConfig)
	}
	u, err := peerURL(r.Advertise)
	if err != nil {
		return fmt.Errorf("%w: advertised URL: %v", ErrConfig, err)
	}
	if r.Timeout <= 0 {
		r.Timeout = defaultStoreTimeout
	}
	if r.KeyPrefix == "" {
		r.KeyPrefix = "bulwark:gateway:parked:"
	}
	if r.TaskKeyPrefix == "" {
		r.TaskKeyPrefix = r.KeyPrefix + "tasks:"
	}
	g.replicas.Store(&sharing{Replicas: r, advertise: u})
	return nil
}

// peerURL parses a replica's MCP endpoint: http or https, a host, the MCP
// path, nothing else (no credentials, query or fragment).
func peerURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return nil, errors.New("not a URL")
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, errors.New("the scheme must be http or https")
	case u.Host == "" || u.Hostname() == "":
		return nil, errors.New("no host")
	case u.User != nil || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || u.Opaque != "":
		return nil, errors.New("it must hold no credentials, query or fragment")
	case u.Path != kernel.MCPPath || u.RawPath != "":
		return nil, fmt.Errorf("the path must be %s", kernel.MCPPath)
	}
	return u, nil
}

// parkedKey is the record's key and its digest part (what the record is
// sealed to): a digest of the id, never the id.
func (s *sharing) parkedKey(id string) (key, digest string) {
	sum := sha256.Sum256([]byte("bulwark-gateway-parked\x00" + id))
	digest = hex.EncodeToString(sum[:])
	return s.KeyPrefix + digest, digest
}

// recordParked records that this replica holds the parked call id, for
// wait. Without ShareParked it records nothing.
func (g *Gateway) recordParked(ctx context.Context, id string, wait time.Duration) error {
	s := g.replicas.Load()
	if s == nil {
		return nil
	}
	key, digest := s.parkedKey(id)
	// The seal outlives the record by a minute: replicas' clocks differ a
	// little, and the store's expiry is the one that counts.
	v, err := s.Sealer.SealFor(purposeParkedRecord, digest, []byte(s.advertise.String()), wait+time.Minute)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.Timeout)
	defer cancel()
	return s.Redis.Set(ctx, key, v, wait).Err()
}

// forgetParked removes the record of the parked call id (it resumed or
// ended). A failure is logged only: the record expires with the wait, and
// until then an answer it routes here is refused by the kernel (spent).
func (g *Gateway) forgetParked(id string) {
	s := g.replicas.Load()
	if s == nil {
		return
	}
	key, _ := s.parkedKey(id)
	ctx, cancel := context.WithTimeout(context.Background(), s.Timeout)
	defer cancel()
	if err := s.Redis.Del(ctx, key).Err(); err != nil {
		g.logger.Warn("the record of a parked call could not be removed from the shared store; it expires by itself", "error", err.Error())
	}
}

// RouteState is the gateway's kernel.StateRouter: the replica that holds
// the parked call an answer resumes, when it is not this one.
func (g *Gateway) RouteState(ctx context.Context, _ string, state []byte) (kernel.Route, error) {
	s := g.replicas.Load()
	id := string(state)
	if s == nil || !isParkID(id) || g.parked.has(id) {
		return kernel.Route{}, nil
	}
	key, digest := s.parkedKey(id)
	ctx, cancel := context.WithTimeout(ctx, s.Timeout)
	defer cancel()
	v, err := s.Redis.Get(ctx, key).Result()
	switch {
	case errors.Is(err, redis.Nil):
		return kernel.Route{}, nil // expired, ended, or never recorded: answered here
	case err != nil:
		return kernel.Route{}, err
	}
	raw, err := s.Sealer.OpenFor(purposeParkedRecord, digest, v)
	if err != nil {
		g.logger.Warn("a parked call's record in the shared store does not open with the requestState key: not followed (another key, or written by someone without it)")
		return kernel.Route{}, nil
	}
	u, err := peerURL(string(raw))
	if err != nil || u.String() == s.advertise.String() {
		return kernel.Route{}, nil // this replica's own, and no longer parked here
	}
	return kernel.Route{URL: u, Timeout: g.forwardTimeout()}, nil
}

// forwardTimeout bounds a forwarded answer: the longest a resumed call may
// still take (the holder's flight ends by its call timeout and a question's
// wait after it started), and a little for the network.
func (g *Gateway) forwardTimeout() time.Duration {
	var longest time.Duration
	for _, l := range g.links {
		longest = max(longest, l.u.callTimeout(g.cfg.CallTimeout))
	}
	return longest + g.parked.relayWait() + 2*time.Second
}

// isParkID reports whether s has the shape parkID gives.
func isParkID(s string) bool {
	if len(s) != 32 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil
}
