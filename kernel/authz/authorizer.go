package authz

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Config names the files an Authorizer loads.
type Config struct {
	// PolicyFile is the Cedar policy file. Required.
	PolicyFile string
	// EntitiesFile, optional, is a Cedar JSON entities file: users' group
	// memberships and groups' parents.
	EntitiesFile string
	// Logger gets reloads and refused reloads; discarded when nil.
	Logger *slog.Logger
}

// Authorizer holds the policy set in force and replaces it whole on
// reload: a decision is made by exactly one set, never a half-loaded one.
type Authorizer struct {
	model  *Model
	cfg    Config
	logger *slog.Logger
	cur    atomic.Pointer[Policies]

	mu  sync.Mutex // serializes reloads
	sum [sha256.Size]byte
}

// New loads and validates the files. An error here stops startup: it names
// the file, the policy and what does not fit.
func New(m *Model, cfg Config) (*Authorizer, error) {
	if cfg.PolicyFile == "" {
		return nil, fmt.Errorf("%w: no policy file", errInvalid)
	}
	a := &Authorizer{model: m, cfg: cfg, logger: cfg.Logger}
	if a.logger == nil {
		a.logger = slog.New(slog.DiscardHandler)
	}
	p, sum, err := a.load()
	if err != nil {
		return nil, err
	}
	a.cur.Store(p)
	a.sum = sum
	return a, nil
}

// Policies returns the set in force.
func (a *Authorizer) Policies() *Policies { return a.cur.Load() }

// Decide decides with the set in force.
func (a *Authorizer) Decide(r Request) Decision { return a.cur.Load().decide(&r) }

// DecideRequest is Decide on *r, which it neither keeps nor changes,
// without copying it.
func (a *Authorizer) DecideRequest(r *Request) Decision { return a.cur.Load().decide(r) }

// Reload reads the files again. A set that does not load leaves the one in
// force untouched, and the error says why (it is also logged).
func (a *Authorizer) Reload() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.reload(true)
}

func (a *Authorizer) reload(force bool) error {
	p, sum, err := a.load()
	if err != nil {
		a.logger.Error("authorization policy not reloaded; the previous policy set stays in force", "file", a.cfg.PolicyFile, "error", err)
		return err
	}
	if !force && sum == a.sum {
		return nil
	}
	a.cur.Store(p)
	a.sum = sum
	a.logger.Info("authorization policy loaded", "file", a.cfg.PolicyFile, "policies", len(p.ids))
	return nil
}

func (a *Authorizer) load() (*Policies, [sha256.Size]byte, error) {
	var sum [sha256.Size]byte
	policy, err := readBounded(a.cfg.PolicyFile)
	if err != nil {
		return nil, sum, err
	}
	var entities []byte
	if a.cfg.EntitiesFile != "" {
		if entities, err = readBounded(a.cfg.EntitiesFile); err != nil {
			return nil, sum, err
		}
	}
	p, err := Parse(a.model, a.cfg.PolicyFile, policy, entities)
	if err != nil {
		return nil, sum, err
	}
	sum = sha256.Sum256(append(append(policy, 0), entities...))
	return p, sum, nil
}

func readBounded(name string) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("authz: reading %s: %w", name, err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("authz: reading %s: %w", name, err)
	}
	if len(b) > maxFileSize {
		return nil, fmt.Errorf("%w: %s is larger than %d bytes", errInvalid, name, maxFileSize)
	}
	return b, nil
}

// WatchOptions tune Watch.
type WatchOptions struct {
	// Interval is how often the files are checked for a change; 2s when
	// zero.
	Interval time.Duration
	// Signals, when set, triggers a reload on every value; when nil, Watch
	// listens for SIGHUP itself.
	Signals <-chan os.Signal
}

// Watch reloads on SIGHUP and when a file's content changes, until ctx
// ends. A broken file is logged and the set in force stays.
func (a *Authorizer) Watch(ctx context.Context, opts WatchOptions) {
	if opts.Interval <= 0 {
		opts.Interval = 2 * time.Second
	}
	sig := opts.Signals
	if sig == nil {
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, syscall.SIGHUP)
		defer signal.Stop(ch)
		sig = ch
	}
	tick := time.NewTicker(opts.Interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-sig:
			_ = a.Reload()
		case <-tick.C:
			a.mu.Lock()
			_ = a.reloadIfChanged()
			a.mu.Unlock()
		}
	}
}

// reloadIfChanged reloads when the files' content differs from the set in
// force; a broken file is reported once per content, not on every tick.
func (a *Authorizer) reloadIfChanged() error {
	policy, err := readBounded(a.cfg.PolicyFile)
	if err != nil {
		return err
	}
	var entities []byte
	if a.cfg.EntitiesFile != "" {
		if entities, err = readBounded(a.cfg.EntitiesFile); err != nil {
			return err
		}
	}
	sum := sha256.Sum256(append(append(policy, 0), entities...))
	if sum == a.sum {
		return nil
	}
	err = a.reload(false)
	if err != nil {
		a.sum = sum // do not log the same broken file on every tick
	}
	return err
}
