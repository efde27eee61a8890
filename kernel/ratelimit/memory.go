package ratelimit

import (
	"container/list"
	"context"
	"sync"
	"time"
)

// MemoryStore is a Store in process memory, bounded in the number of keys.
// When full, it first drops windows that have closed and then the window
// opened longest ago. Counters are not shared between processes.
type MemoryStore struct {
	max int

	mu    sync.Mutex
	order *list.List // of *window, oldest opened first
	byKey map[string]*list.Element
}

type window struct {
	key     string
	count   int
	resetAt time.Time
}

// NewMemoryStore returns a MemoryStore holding at most maxKeys keys;
// maxKeys below 1 means DefaultMaxPrincipals.
func NewMemoryStore(maxKeys int) *MemoryStore {
	if maxKeys < 1 {
		maxKeys = DefaultMaxPrincipals
	}
	return &MemoryStore{max: maxKeys, order: list.New(), byKey: make(map[string]*list.Element)}
}

// Hit implements Store. It never fails.
func (m *MemoryStore) Hit(_ context.Context, key string, now time.Time, length time.Duration) (int, time.Time, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e, ok := m.byKey[key]; ok {
		w := e.Value.(*window)
		if now.Before(w.resetAt) {
			w.count++
			return w.count, w.resetAt, nil
		}
		m.remove(e)
	}
	m.makeRoom(now)
	w := &window{key: key, count: 1, resetAt: now.Add(length)}
	m.byKey[key] = m.order.PushBack(w)
	return w.count, w.resetAt, nil
}

// Len returns the number of keys held.
func (m *MemoryStore) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.byKey)
}

// makeRoom drops closed windows from the front, then evicts the oldest
// open window while the store is full.
func (m *MemoryStore) makeRoom(now time.Time) {
	for e := m.order.Front(); e != nil && !now.Before(e.Value.(*window).resetAt); e = m.order.Front() {
		m.remove(e)
	}
	for len(m.byKey) >= m.max {
		m.remove(m.order.Front())
	}
}

func (m *MemoryStore) remove(e *list.Element) {
	delete(m.byKey, e.Value.(*window).key)
	m.order.Remove(e)
}
