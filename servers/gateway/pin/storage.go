package pin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"
)

// formatVersion is the version of State this package reads and writes.
const formatVersion = 1

// State is everything pinned, per upstream: the approved definitions and
// the last-seen definitions waiting for approval.
type pinState struct {
	Version   int                      `json:"version"`
	Upstreams map[string]*upstreamPins `json:"upstreams"`
}

// Upstream is the pins of one upstream, keyed by tool name.
type upstreamPins struct {
	// Pinned are the approved definitions.
	Pinned map[string]*pinEntry `json:"pinned"`
	// Pending are the last-seen definitions that differ from the pin, are
	// new under require-approval, or rename a pinned tool.
	Pending map[string]*pinEntry `json:"pending,omitempty"`
}

// Entry is one tool definition in canonical form.
type pinEntry struct {
	// Hash is the hex SHA-256 of Definition.
	Hash string `json:"hash"`
	// BodyHash is the hex SHA-256 of Definition without its name (see
	// Definition.BodyHash): how a rename is found.
	BodyHash string `json:"bodyHash"`
	// Definition is the whole tool object: RFC 8785 form in memory,
	// indented in a file (verify puts it back in canonical form).
	Definition json.RawMessage `json:"definition"`
	// At is when it was pinned or last seen.
	At time.Time `json:"at"`
	// RenameOf, for a pending rename, is the pinned tool whose definition
	// it repeats under a new name.
	RenameOf string `json:"renameOf,omitempty"`
}

// errCorrupt marks a pin state that does not verify: unreadable, of an
// unknown version, or holding an entry whose hash is not that of its
// definition, whose definition is not canonical, or whose name disagrees
// with its key. It is never silently reset: a person looks at the file.
var errCorrupt = errors.New("pin state corrupt or tampered with")

// errNoChange, returned by an Update function, saves nothing.
var errNoChange = errors.New("no change")

// Storage keeps the State. The file implementation serves one host; a
// shared-store implementation (Redis) serves replicas: Update is then a
// compare-and-swap on the stored state.
type storage interface {
	// Load returns the current state, verified. A storage that holds
	// nothing yet returns an empty state.
	Load(ctx context.Context) (*pinState, error)
	// Update loads the current state, applies fn and saves the result, with
	// no other Update of the same state (in this process or another)
	// between the load and the save. fn returning errNoChange saves nothing
	// and Update returns nil; any other error is returned as it is.
	Update(ctx context.Context, fn func(*pinState) error) error
}

// verify checks every entry of s (see errCorrupt) and puts each
// definition back in canonical form (a file holds them indented).
func (s *pinState) verify() error {
	if s.Version != formatVersion {
		return fmt.Errorf("%w: version %d, want %d", errCorrupt, s.Version, formatVersion)
	}
	for up, u := range s.Upstreams {
		if u == nil {
			return fmt.Errorf("%w: upstream %q is null", errCorrupt, up)
		}
		for _, m := range []map[string]*pinEntry{u.Pinned, u.Pending} {
			for name, e := range m {
				if err := e.verify(name); err != nil {
					return fmt.Errorf("%w: upstream %q tool %q: %v", errCorrupt, up, name, err)
				}
			}
		}
	}
	return nil
}

func (e *pinEntry) verify(name string) error {
	if e == nil {
		return errors.New("null entry")
	}
	d, err := parse(e.Definition, len(e.Definition))
	switch {
	case err != nil:
		return err
	case d.Hash != e.Hash || d.BodyHash != e.BodyHash:
		return errors.New("hash does not match the definition")
	case d.Name != name:
		return errors.New("the definition's name is not its key")
	}
	e.Definition = d.Canonical
	return nil
}

// newState is an empty State.
func newState() *pinState {
	return &pinState{Version: formatVersion, Upstreams: map[string]*upstreamPins{}}
}

// upstream returns s's entry for name, creating it.
func (s *pinState) upstream(name string) *upstreamPins {
	u := s.Upstreams[name]
	if u == nil {
		u = &upstreamPins{Pinned: map[string]*pinEntry{}}
		s.Upstreams[name] = u
	}
	if u.Pinned == nil {
		u.Pinned = map[string]*pinEntry{}
	}
	if u.Pending == nil {
		u.Pending = map[string]*pinEntry{}
	}
	return u
}

// encode is s as JSON, indented for a file a person may read. HTML
// escaping is off: it would rewrite '<' in a canonical definition as
// \u003c, and a clone would no longer hold the canonical bytes.
func (s *pinState) encode(indent bool) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if indent {
		enc.SetIndent("", "  ")
	}
	if err := enc.Encode(s); err != nil {
		panic(err) // a State always encodes
	}
	return b.Bytes()
}

// clone deep-copies s through its JSON form.
func (s *pinState) clone() *pinState {
	b := s.encode(false)
	c := new(pinState)
	if err := json.Unmarshal(b, c); err != nil {
		panic(err)
	}
	return c
}

// Memory is a Storage in memory, for tests and for a gateway that keeps
// no pins across restarts.
type memoryStorage struct {
	mu    sync.Mutex
	state *pinState
}

// NewMemory returns an empty Memory.
func newMemory() *memoryStorage { return &memoryStorage{state: newState()} }

// Load implements Storage.
func (m *memoryStorage) Load(context.Context) (*pinState, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.state.clone(), nil
}

// Update implements Storage.
func (m *memoryStorage) Update(_ context.Context, fn func(*pinState) error) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.state.clone()
	if err := fn(s); err != nil {
		if errors.Is(err, errNoChange) {
			return nil
		}
		return err
	}
	m.state = s
	return nil
}
