package vdb

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/bulwarkmcp/bulwark/kernel/seal"
)

// redisTimeout bounds one Redis operation of RedisKeys.
const redisTimeout = 2 * time.Second

// RedisKeys keeps signed-in keys in Redis, so that replicas share them:
// each value sealed at rest under its own purpose and bound to its
// principal, under a key naming only a digest of the principal. An
// unreachable Redis fails closed (the call errs; no key is assumed).
type RedisKeys struct {
	client redis.UniversalClient
	sealer *seal.Sealer
	prefix string
}

// NewRedisKeys returns a store over client (which the caller keeps).
func NewRedisKeys(client redis.UniversalClient, sealer *seal.Sealer) *RedisKeys {
	return &RedisKeys{client: client, sealer: sealer, prefix: "bulwark:vdb:key:"}
}

func (k *RedisKeys) key(principal string) string {
	sum := sha256.Sum256([]byte(principal))
	return k.prefix + hex.EncodeToString(sum[:])
}

// Get implements KeyStore.
func (k *RedisKeys) Get(principal string) (string, bool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), redisTimeout)
	defer cancel()
	h, err := k.client.Get(ctx, k.key(principal)).Result()
	if errors.Is(err, redis.Nil) {
		return "", false, nil
	}
	if err != nil {
		return "", false, storeErr("reading the stored key", err)
	}
	b, err := k.sealer.OpenFor(purposeKeyAtRest, principal, h)
	if err != nil {
		return "", false, nil // expired or sealed for someone else: as if signed out
	}
	return string(b), true, nil
}

// Put implements KeyStore.
func (k *RedisKeys) Put(principal, key string) error {
	h, err := k.sealer.SealFor(purposeKeyAtRest, principal, []byte(key), keyTTL)
	if err != nil {
		return fmt.Errorf("sealing the key: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), redisTimeout)
	defer cancel()
	if err := k.client.Set(ctx, k.key(principal), h, keyTTL).Err(); err != nil {
		return storeErr("storing the key", err)
	}
	return nil
}

// Delete implements KeyStore.
func (k *RedisKeys) Delete(principal string) (bool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), redisTimeout)
	defer cancel()
	n, err := k.client.Del(ctx, k.key(principal)).Result()
	if err != nil {
		return false, storeErr("deleting the key", err)
	}
	return n > 0, nil
}
