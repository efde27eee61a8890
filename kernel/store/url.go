package store

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/redis/go-redis/v9"
)

// Topology is the kind of Redis deployment a URL names.
type Topology string

// The topologies ParseURL tells apart.
const (
	// Single is one Redis server (redis.ParseURL).
	Single Topology = "single"
	// Cluster is a Redis Cluster reached through several seed nodes
	// (redis.ParseClusterURL: the URL's host plus each addr= parameter).
	Cluster Topology = "cluster"
	// Sentinel is a primary and its replicas found through Redis Sentinel
	// (redis.ParseFailoverURL: master_name= names the primary; the URL's
	// host plus each addr= parameter are the sentinels).
	Sentinel Topology = "sentinel"
)

// Endpoint is a parsed Redis URL: the deployment it names and go-redis's
// options for its client. It holds the password: never log it; Addrs is
// what may be shown.
type Endpoint struct {
	// Topology is the kind of deployment.
	Topology Topology
	single   *redis.Options
	cluster  *redis.ClusterOptions
	failover *redis.FailoverOptions
}

// errors of ParseURL beyond errBadURL; none repeats the URL.
var (
	errSkipVerify = errors.New("store: the Redis URL turns TLS certificate checks off (skip_verify), which bulwark does not accept: trust the server's CA instead (SSL_CERT_FILE)")
	errTwoSecrets = errors.New("store: the Redis URL holds a password and a password file is given too: keep the password in one place")
)

// ParseURL parses a Redis URL with go-redis's own parser for the
// deployment it names, chosen by its query: master_name= is Sentinel
// (redis.ParseFailoverURL), addr= without it is a Cluster
// (redis.ParseClusterURL), neither is one server (redis.ParseURL, which
// also takes unix://). rediss:// is TLS for every node. password, when not
// empty (a password read from a file), is the password of the data nodes;
// the URL must then hold none (a Sentinel URL's user info is the
// sentinels' own). skip_verify is refused. No error repeats the URL.
func ParseURL(raw, password string) (*Endpoint, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, errBadURL
	}
	q := u.Query()
	if q.Has("skip_verify") {
		return nil, errSkipVerify
	}
	e := &Endpoint{Topology: Single}
	var inURL *string
	switch {
	case q.Has("master_name"):
		e.Topology = Sentinel
		if e.failover, err = redis.ParseFailoverURL(raw); err == nil {
			inURL = &e.failover.Password
		}
	case q.Has("addr"):
		e.Topology = Cluster
		if e.cluster, err = redis.ParseClusterURL(raw); err == nil {
			inURL = &e.cluster.Password
		}
	default:
		if e.single, err = redis.ParseURL(raw); err == nil {
			inURL = &e.single.Password
		}
	}
	if err != nil {
		return nil, libraryError(err)
	}
	if e.Topology == Sentinel && e.failover.MasterName == "" {
		return nil, fmt.Errorf("%w: master_name is empty", errBadURL)
	}
	if password != "" {
		if *inURL != "" {
			return nil, errTwoSecrets
		}
		*inURL = password
	}
	return e, nil
}

// libraryError is errBadURL with the kind of go-redis's reason. The
// reason's own text is not repeated: it quotes what the URL held (an
// option's name, a value), which may be a misplaced password.
func libraryError(err error) error {
	msg := strings.TrimPrefix(err.Error(), "redis: ")
	for _, r := range libraryReasons {
		if strings.HasPrefix(msg, r[0]) {
			return fmt.Errorf("%w: %s", errBadURL, r[1])
		}
	}
	return errBadURL
}

// libraryReasons map the start of go-redis's URL errors to what bulwark
// says instead.
var libraryReasons = [][2]string{
	{"invalid URL scheme", "the scheme is not redis://, rediss:// or unix://"},
	{"invalid database number", "the database is not a number"},
	{"invalid URL path", "the path is not /DATABASE"},
	{"unexpected option", "a query parameter is not one go-redis knows"},
	{"unable to parse addr param", "an addr= is not HOST:PORT"},
	{"empty unix socket path", "the unix socket path is empty"},
	{"invalid", "a query parameter's value is not valid"},
}

// Addrs are the addresses the endpoint starts from (the server, the
// Cluster's seeds or the sentinels), for messages: no password.
func (e *Endpoint) Addrs() []string {
	switch e.Topology {
	case Cluster:
		return e.cluster.Addrs
	case Sentinel:
		return e.failover.SentinelAddrs
	}
	return []string{e.single.Addr}
}

// NewClient returns a new client for the endpoint, which the caller closes.
func (e *Endpoint) NewClient() redis.UniversalClient {
	switch e.Topology {
	case Cluster:
		return redis.NewClusterClient(e.cluster)
	case Sentinel:
		return redis.NewFailoverClient(e.failover)
	}
	return redis.NewClient(e.single)
}

// ErrClusterNode is Check's error for a URL of one server that is a
// Cluster node: the client would not follow the Cluster's redirects.
var ErrClusterNode = errors.New("store: this Redis is a Cluster node: name two or more seed nodes (redis://host1:port?addr=host2:port)")

// Check pings the endpoint through client, and refuses a one-server URL
// that reaches a Cluster node.
func (e *Endpoint) Check(ctx context.Context, client redis.UniversalClient) error {
	if err := client.Ping(ctx).Err(); err != nil {
		return wrap("reaching Redis", err)
	}
	if e.Topology != Single {
		return nil
	}
	info, err := client.Info(ctx, "cluster").Result()
	if err != nil {
		return nil // a server that hides INFO (ACL) is taken as it is
	}
	if strings.Contains(info, "cluster_enabled:1") {
		return ErrClusterNode
	}
	return nil
}
