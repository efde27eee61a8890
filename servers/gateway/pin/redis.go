package pin

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// maxUpdateRetries bounds the compare-and-swap retries of Redis.Update.
const maxUpdateRetries = 16

// Redis is a Storage in one Redis key, shared by gateway replicas: Update
// is a compare-and-swap (WATCH, then MULTI/EXEC), retried when another
// replica wrote between the read and the write. The value is the same
// JSON as a file's, verified on every change (errCorrupt, never a reset).
// Pins are not secret, but anyone who can write the key can approve a
// definition: give the gateway's Redis the protection its confirmation
// tokens already need.
type redisStorage struct {
	client  redis.UniversalClient
	key     string
	timeout time.Duration

	mu     sync.Mutex
	sum    [32]byte // of the value cached was read from
	cached *pinState
}

// newRedis returns the Storage at key of client, which the caller keeps
// and closes. Each operation is bounded by timeout (2 seconds if zero).
func newRedis(client redis.UniversalClient, key string, timeout time.Duration) (*redisStorage, error) {
	if client == nil || key == "" {
		return nil, errors.New("pin: Redis storage needs a client and a key")
	}
	if timeout <= 0 {
		timeout = 2 * time.Second
	}
	return &redisStorage{client: client, key: key, timeout: timeout}, nil
}

// Load implements Storage: one GET; the value is parsed and verified only
// when it differs from the last one read. The State is shared: callers
// must not modify it.
func (r *redisStorage) Load(ctx context.Context) (*pinState, error) {
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	b, err := r.client.Get(ctx, r.key).Bytes()
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("pin: reading Redis: %w", err)
	}
	return r.decode(b)
}

func (r *redisStorage) decode(b []byte) (*pinState, error) {
	if len(b) == 0 {
		return newState(), nil
	}
	if len(b) > maxFile {
		return nil, fmt.Errorf("%w: Redis value larger than %d bytes", errCorrupt, maxFile)
	}
	sum := sha256.Sum256(b)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cached != nil && sum == r.sum {
		return r.cached, nil
	}
	s, err := decodeState(b)
	if err != nil {
		return nil, fmt.Errorf("Redis key %s: %w", r.key, err)
	}
	r.cached, r.sum = s, sum
	return s, nil
}

// Update implements Storage.
func (r *redisStorage) Update(ctx context.Context, fn func(*pinState) error) error {
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	var fnErr error
	txf := func(tx *redis.Tx) error {
		b, err := tx.Get(ctx, r.key).Bytes()
		if err != nil && !errors.Is(err, redis.Nil) {
			return err
		}
		cur, err := r.decode(b)
		if err != nil {
			fnErr = err
			return nil
		}
		next := cur.clone()
		if fnErr = fn(next); fnErr != nil {
			return nil
		}
		data := next.encode(false)
		_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.Set(ctx, r.key, data, 0)
			return nil
		})
		return err
	}
	for range maxUpdateRetries {
		fnErr = nil
		err := r.client.Watch(ctx, txf, r.key)
		if errors.Is(err, redis.TxFailedErr) {
			continue // another replica wrote first: read again
		}
		if err != nil {
			return fmt.Errorf("pin: updating Redis: %w", err)
		}
		if errors.Is(fnErr, errNoChange) {
			return nil
		}
		return fnErr
	}
	return fmt.Errorf("pin: updating Redis: %d replicas' writes in a row got in first", maxUpdateRetries)
}
