package pin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/bulwarkmcp/bulwark/kernel/untrusted"
)

// Mode says what happens to a tool seen for the first time.
type Mode int

const (
	// TrustOnFirstUse pins a new tool when it is first seen, and logs it.
	TrustOnFirstUse Mode = iota
	// RequireApproval hides a new tool until `bulwark gateway approve`.
	RequireApproval
)

// Options configure a Store. The zero value trusts on first use, logs to
// slog.Default and allows definitions of defaultMaxDefinition bytes.
type Options struct {
	Mode Mode
	// Logger receives one record per pin on first use and per definition
	// hidden (a change, a rename, a new tool under RequireApproval).
	Logger *slog.Logger
	// MaxDefinition is the largest tool definition in bytes; a larger one
	// is an error (errDefinition).
	MaxDefinition int
	// MaxUpstreamBytes bounds what one upstream may make the state hold:
	// the sum of its pinned and pending definitions
	// (defaultMaxUpstreamBytes if zero). A definition beyond it is hidden
	// and not recorded, so an upstream that lists endless tools cannot
	// grow the pin file without bound.
	MaxUpstreamBytes int
	// Now is the clock (time.Now if nil).
	Now func() time.Time
	// AllowFlaggedDefinitions pins a new tool on first use even when the
	// description scan flags its definition (flagKinds). By default, under
	// TrustOnFirstUse, such a tool is hidden until approved, as under
	// RequireApproval, and the log says why.
	AllowFlaggedDefinitions bool
}

// flagKinds are the findings that hide a new tool under TrustOnFirstUse:
// text that addresses the model or hides from the person who approves.
// URLs, other tools' names and words about secrets are advice shown at
// approval, not reasons to hide a tool that may legitimately have them.
var flagKinds = []Kind{kindHiddenInstruction, kindPromptTag, kindInvisible, kindBidi, kindEnvelopeTag}

// flags returns the findings of d's scan that hide it on first use.
func flags(d *definition, maxDefinition int) []Finding {
	all, err := Scan(d.Canonical, &ScanOptions{MaxDefinition: maxDefinition})
	if err != nil {
		return []Finding{{Where: "definition", Kind: kindInvisible, Detail: "the definition could not be scanned"}}
	}
	var out []Finding
	for _, f := range all {
		if slices.Contains(flagKinds, f.Kind) {
			out = append(out, f)
		}
	}
	return out
}

// flagReason says why a new definition is hidden: how many findings, of
// which kinds, and the first one's place.
func flagReason(upstream string, d *definition, found []Finding) string {
	var kinds []string
	for _, f := range found {
		if !slices.Contains(kinds, string(f.Kind)) {
			kinds = append(kinds, string(f.Kind))
		}
	}
	return fmt.Sprintf("upstream %q offers new tool %s whose definition the description scan flags (%d finding(s): %s; first at %s); hidden until approved (bulwark gateway approve %s)",
		upstream, quoteName(d.Name), len(found), strings.Join(kinds, ", "), cleanName(found[0].Where), approveArg(upstream, d.Name))
}

// Store decides, tool by tool, whether an upstream's definition matches
// its pin. It is safe for concurrent use; the state lives in a Storage.
type Store struct {
	st   storage
	opts Options
}

// newStore returns a Store over st.
func newStore(st storage, opts *Options) (*Store, error) {
	if st == nil {
		return nil, errors.New("pin: no storage")
	}
	s := &Store{st: st}
	if opts != nil {
		s.opts = *opts
	}
	if s.opts.Mode != TrustOnFirstUse && s.opts.Mode != RequireApproval {
		return nil, fmt.Errorf("pin: unknown mode %d", s.opts.Mode)
	}
	if s.opts.Logger == nil {
		s.opts.Logger = slog.Default()
	}
	if s.opts.MaxDefinition <= 0 {
		s.opts.MaxDefinition = defaultMaxDefinition
	}
	if s.opts.MaxUpstreamBytes <= 0 {
		s.opts.MaxUpstreamBytes = defaultMaxUpstreamBytes
	}
	if s.opts.Now == nil {
		s.opts.Now = time.Now
	}
	return s, nil
}

// Open returns a Store over the pin file at path (see file).
func Open(path string, opts *Options) (*Store, error) {
	f, err := newFile(path)
	if err != nil {
		return nil, err
	}
	return newStore(f, opts)
}

// OpenMemory returns a Store whose pins live in this process only (tests,
// and a gateway told to keep no pin file).
func OpenMemory(opts *Options) (*Store, error) { return newStore(newMemory(), opts) }

// OpenRedis returns a Store whose pins live at key of client, shared by
// every replica that opens the same key; the caller keeps and closes the
// client. Each operation is bounded by timeout (2 seconds if zero).
func OpenRedis(client redis.UniversalClient, key string, timeout time.Duration, opts *Options) (*Store, error) {
	r, err := newRedis(client, key, timeout)
	if err != nil {
		return nil, err
	}
	return newStore(r, opts)
}

// defaultMaxUpstreamBytes is the default of Options.MaxUpstreamBytes.
const defaultMaxUpstreamBytes = 4 << 20

// The gateway's seam: servers/gateway declares
//
//	type Pinner interface { Check(upstream string, tool json.RawMessage) (hash string, allowed bool, reason string, err error) }
//
// and *Store implements it.
var _ interface {
	Check(upstream string, tool json.RawMessage) (hash string, allowed bool, reason string, err error)
} = (*Store)(nil)

// verdict is what Check decides for one definition.
type verdict struct {
	allowed bool
	reason  string
	pending *pinEntry // to record as pending; nil if none
	pin     bool      // pin the definition (trust on first use)
	clear   bool      // drop a stale pending entry of the same name
}

// Check implements the gateway's Pinner: it canonicalizes and hashes one
// tool object of upstream as it arrived on the wire and says whether the
// tool may be shown. A definition equal to its pin is allowed. A new tool
// is pinned and allowed under TrustOnFirstUse, hidden under
// RequireApproval. A changed definition, or a pinned definition under a
// new name (a rename), is hidden with a reason naming the upstream and
// what changed, and recorded as pending for `bulwark gateway approve`. err
// is for a definition that cannot be pinned (errDefinition) or a storage
// failure; the tool is then hidden.
//
// Check sees one tool, so it cannot tell a rename from a second tool that
// shares a pinned tool's definition while that tool is still offered: it
// hides both. CheckList, given the whole listing, tells them apart.
func (s *Store) Check(upstream string, tool json.RawMessage) (hash string, allowed bool, reason string, err error) {
	r := s.check(context.Background(), upstream, tool, nil)
	return r.Hash, r.Allowed, r.Reason, r.Err
}

// Result is Check's answer for one tool of a listing.
type Result struct {
	// Name is the tool's name ("" if the definition has none).
	Name    string
	Hash    string
	Allowed bool
	Reason  string
	Err     error
}

// CheckList checks every tool of one listing of upstream (tools/list, at
// start or after notifications/tools/list_changed), in order. Knowing the
// whole listing, it counts a new name as a rename only when the pinned
// tool whose definition it repeats is no longer listed.
func (s *Store) CheckList(ctx context.Context, upstream string, tools []json.RawMessage) []Result {
	listed := map[string]bool{}
	defs := make([]*definition, len(tools))
	errs := make([]error, len(tools))
	for i, t := range tools {
		defs[i], errs[i] = parse(t, s.opts.MaxDefinition)
		if errs[i] == nil {
			listed[defs[i].Name] = true
		}
	}
	out := make([]Result, len(tools))
	for i, d := range defs {
		if errs[i] != nil {
			out[i] = Result{Err: fmt.Errorf("upstream %q: %w", upstream, errs[i])}
			continue
		}
		out[i] = s.decideAndRecord(ctx, upstream, d, listed)
	}
	return out
}

func (s *Store) check(ctx context.Context, upstream string, tool json.RawMessage, listed map[string]bool) Result {
	d, err := parse(tool, s.opts.MaxDefinition) // before any lock: untrusted input
	if err != nil {
		return Result{Err: fmt.Errorf("upstream %q: %w", upstream, err)}
	}
	return s.decideAndRecord(ctx, upstream, d, listed)
}

// decideAndRecord decides on the current state and, when the decision
// changes the state (a pin, a new pending definition, a stale one
// dropped), decides again inside the storage's Update and records it.
func (s *Store) decideAndRecord(ctx context.Context, upstream string, d *definition, listed map[string]bool) Result {
	res := Result{Name: d.Name, Hash: d.Hash}
	cur, err := s.st.Load(ctx)
	if err != nil {
		res.Err = err
		return res
	}
	v := s.decide(cur, upstream, d, listed)
	if v.pending != nil || v.pin || v.clear {
		err = s.st.Update(ctx, func(st *pinState) error {
			v = s.decide(st, upstream, d, listed) // the state may have moved since Load
			u := st.upstream(upstream)
			switch {
			case v.pin:
				u.Pinned[d.Name] = d.entry(s.opts.Now())
				delete(u.Pending, d.Name)
			case v.pending != nil:
				u.Pending[d.Name] = v.pending
			case v.clear:
				delete(u.Pending, d.Name)
			default:
				return errNoChange
			}
			return nil
		})
		if err != nil {
			res.Err = err
			return res
		}
		s.log(upstream, d, v)
	}
	res.Allowed, res.Reason = v.allowed, v.reason
	return res
}

// decide compares d with st's pins of upstream. It does not modify st.
// listed, when not nil, is the set of names of the whole listing.
func (s *Store) decide(st *pinState, upstream string, d *definition, listed map[string]bool) verdict {
	u := st.Upstreams[upstream]
	var pinned, pending *pinEntry
	if u != nil {
		pinned, pending = u.Pinned[d.Name], u.Pending[d.Name]
	}
	name := quoteName(d.Name)
	if pinned != nil && pinned.Hash == d.Hash {
		return verdict{allowed: true, clear: pending != nil}
	}
	// Only a changed definition is recorded again: a hidden tool listed
	// again costs no write.
	seen := pending != nil && pending.Hash == d.Hash
	record := func(e *pinEntry) *pinEntry {
		if seen {
			return nil
		}
		return e
	}
	entry := d.entry(s.opts.Now())
	if !seen && size(u, d.Name)+len(d.Canonical) > s.opts.MaxUpstreamBytes {
		return verdict{reason: fmt.Sprintf("upstream %q offers tool %s, but its definitions exceed %d bytes: hidden and not recorded", upstream, name, s.opts.MaxUpstreamBytes)}
	}
	if pinned != nil {
		changes := strings.Join(changes(pinned.Definition, d.Canonical), ", ")
		return verdict{reason: fmt.Sprintf("upstream %q changed tool %s since it was pinned: %s; hidden until approved (bulwark gateway approve %s)", upstream, name, changes, approveArg(upstream, d.Name)), pending: record(entry)}
	}
	if old := renameOf(u, d, listed); old != "" {
		entry.RenameOf = old
		return verdict{reason: fmt.Sprintf("upstream %q offers tool %s with the pinned definition of %s under a new name (a rename); hidden until approved (bulwark gateway approve %s)", upstream, name, quoteName(old), approveArg(upstream, d.Name)), pending: record(entry)}
	}
	if s.opts.Mode == TrustOnFirstUse {
		if !s.opts.AllowFlaggedDefinitions {
			if found := flags(d, s.opts.MaxDefinition); len(found) > 0 {
				return verdict{reason: flagReason(upstream, d, found), pending: record(entry)}
			}
		}
		return verdict{allowed: true, pin: true}
	}
	return verdict{reason: fmt.Sprintf("upstream %q offers new tool %s, not yet approved (bulwark gateway approve %s)", upstream, name, approveArg(upstream, d.Name)), pending: record(entry)}
}

// size is the bytes of u's definitions, without name's pending one (which
// a new one replaces).
func size(u *upstreamPins, name string) int {
	if u == nil {
		return 0
	}
	n := 0
	for _, e := range u.Pinned {
		n += len(e.Definition)
	}
	for k, e := range u.Pending {
		if k != name {
			n += len(e.Definition)
		}
	}
	return n
}

// renameOf returns the pinned tool of u whose definition, name aside, is
// d's and that listed (when not nil) does not hold, or "".
func renameOf(u *upstreamPins, d *definition, listed map[string]bool) string {
	if u == nil {
		return ""
	}
	var names []string
	for n, e := range u.Pinned {
		if n == d.Name || listed[n] {
			continue
		}
		if e.BodyHash == d.BodyHash {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return ""
	}
	slices.Sort(names)
	return names[0]
}

func (s *Store) log(upstream string, d *definition, v verdict) {
	l := s.opts.Logger.With("upstream", upstream, "tool", cleanName(d.Name), "hash", d.Hash)
	switch {
	case v.pin:
		l.Info("pin: tool pinned on first use")
	case v.pending != nil:
		l.Warn("pin: tool hidden", "reason", v.reason)
	}
}

// cleanName is a tool name of an upstream as logs and reasons show it:
// cleaned of invisible characters and cut to 128 bytes.
func cleanName(n string) string {
	n = untrusted.CleanString(n)
	if len(n) > 128 {
		n = strings.ToValidUTF8(n[:128], "") + "…"
	}
	return n
}

func quoteName(n string) string { return strconv.Quote(cleanName(n)) }

// approveArg is the UPSTREAM.TOOL argument of `bulwark gateway approve`.
func approveArg(upstream, tool string) string {
	return shellWord(upstream + "." + cleanName(tool))
}

// shellWord quotes s for a POSIX shell unless it is made of safe bytes.
func shellWord(s string) string {
	safe := s != ""
	for i := 0; i < len(s) && safe; i++ {
		c := s[i]
		safe = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("._-/:@", c) >= 0
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
