package confirm

import (
	"context"
	"sync"
	"time"
)

// MemoryStore keeps pending tokens in this process. Tokens die with it.
type MemoryStore struct {
	mu     sync.Mutex
	tokens map[[32]byte]Pending
	order  map[string][][32]byte // per principal, oldest first
}

// NewMemoryStore returns an empty MemoryStore.
func NewMemoryStore() *MemoryStore {
	return &MemoryStore{tokens: map[[32]byte]Pending{}, order: map[string][][32]byte{}}
}

// Put implements Store.
func (s *MemoryStore) Put(_ context.Context, p Pending, max int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	list := s.order[p.Principal]
	live := list[:0]
	for _, h := range list {
		if _, ok := s.tokens[h]; ok {
			live = append(live, h)
		}
	}
	for len(live) >= max && len(live) > 0 {
		delete(s.tokens, live[0])
		live = live[1:]
	}
	s.tokens[p.TokenHash] = p
	s.order[p.Principal] = append(live, p.TokenHash)
	return nil
}

// Redeem implements Store.
func (s *MemoryStore) Redeem(_ context.Context, principal string, tokenHash, digest [32]byte, now time.Time) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.tokens[tokenHash]
	if !ok || p.Principal != principal || p.Digest != digest {
		return false, nil
	}
	if !now.Before(p.Expires) {
		delete(s.tokens, tokenHash)
		return false, nil
	}
	delete(s.tokens, tokenHash)
	if len(s.tokens) == 0 {
		clear(s.order)
	}
	return true, nil
}

// Len reports how many tokens are pending (expired ones included until swept).
func (s *MemoryStore) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.tokens)
}
