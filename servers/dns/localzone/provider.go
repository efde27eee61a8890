package localzone

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/bulwarkmcp/bulwark/kernel/atomicfile"
	"github.com/bulwarkmcp/bulwark/servers/dns"
	mdns "github.com/miekg/dns"
)

var _ dns.Provider = (*Provider)(nil)

// DefaultNameservers are the NS names assigned to new primary zones when
// Options.Nameservers is empty. "localhost." is reserved (RFC 6761 §6.3):
// it always names the loopback host, which is where the responder answers,
// it never leaks a made-up name into the public DNS, and unlike a name under
// ".local" it does not collide with multicast DNS.
var DefaultNameservers = []string{"localhost."}

// DefaultHistoryLimit is how many actions a zone's sidecar keeps.
const DefaultHistoryLimit = 1000

// Options configures a Provider. The zero value is usable.
type Options struct {
	// Nameservers are the NS names (absolute, ending in a dot) assigned to
	// each new primary zone; the first is the SOA's MNAME. Default:
	// DefaultNameservers.
	Nameservers []string
	// Hostmaster is the SOA RNAME of new zones, absolute, in mailbox form
	// ("hostmaster.example.org."). Default: hostmaster.<zone>.
	Hostmaster string
	// HistoryLimit is how many actions each zone keeps; default
	// DefaultHistoryLimit.
	HistoryLimit int
	// Now is the clock; default time.Now.
	Now func() time.Time
	// CacheBytes bounds the memory of parsed zone files kept between calls
	// (estimated; the least recently used zones go first); default
	// DefaultCacheBytes, negative keeps none (every call parses).
	CacheBytes int64
	// SerialPolicy is how a change bumps a zone's SOA serial: SerialDate
	// (YYYYMMDDnn, the default) or SerialIncrement (one more).
	// ZoneSerialPolicy sets it per zone (by name), over SerialPolicy.
	SerialPolicy     SerialPolicy
	ZoneSerialPolicy map[string]SerialPolicy
	// DNSSEC signs the zones named (by name; "*" for every zone) online,
	// each with a key made for it and kept in the data directory
	// (dnssec.go). The responder serves the signed zone.
	DNSSEC map[string]DNSSEC
	// DisableSync skips fsync of files and the directory. Readers and a
	// killed process still see every file whole (old or new), but a crash of
	// the machine may lose or reorder recent writes. For tests and
	// throwaway data only.
	DisableSync bool
}

// ErrBadOptions wraps every error New reports about its Options.
var ErrBadOptions = errors.New("localzone: bad options")

// Provider is the local dns.Provider: zone files in a directory. Several
// Providers, in this process or others, may share a directory.
type Provider struct {
	opts    Options
	store   *store
	signers *signers
}

// New returns a Provider keeping its zones in dir, which it creates (mode
// 0700) if needed.
func New(dir string, opts *Options) (*Provider, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if len(o.Nameservers) == 0 {
		o.Nameservers = DefaultNameservers
	}
	o.Nameservers = slices.Clone(o.Nameservers)
	for _, ns := range o.Nameservers {
		if !mdns.IsFqdn(ns) || !validHost(ns) {
			return nil, fmt.Errorf("%w: nameserver %q is not an absolute host name", ErrBadOptions, ns)
		}
	}
	if o.Hostmaster != "" && (!mdns.IsFqdn(o.Hostmaster) || !validHost(o.Hostmaster)) {
		return nil, fmt.Errorf("%w: hostmaster %q is not an absolute name", ErrBadOptions, o.Hostmaster)
	}
	if o.HistoryLimit <= 0 {
		o.HistoryLimit = DefaultHistoryLimit
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if dir == "" {
		return nil, fmt.Errorf("%w: empty data directory", ErrBadOptions)
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("localzone: data directory: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("localzone: creating data directory: %w", err)
	}
	cacheBytes := o.CacheBytes
	if cacheBytes == 0 {
		cacheBytes = DefaultCacheBytes
	}
	st := newStore(dir, o.Now, o.Nameservers, cacheBytes)
	st.noSync = o.DisableSync
	if err := st.setSerialPolicy(o.SerialPolicy, o.ZoneSerialPolicy); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadOptions, err)
	}
	if err := st.write(context.Background(), st.removeTemp); err != nil {
		return nil, fmt.Errorf("localzone: %w", err)
	}
	sg := &signers{dir: dir, noSync: o.DisableSync, settings: map[string]DNSSEC{}, keys: map[string]*zoneKey{}}
	for z, d := range o.DNSSEC {
		if err := d.fill(); err != nil {
			return nil, fmt.Errorf("%w: zone %s: %w", ErrBadOptions, z, err)
		}
		if z != "*" {
			if err := validateZoneName(canonicalZoneName(z)); err != nil {
				return nil, fmt.Errorf("%w: DNSSEC zone %q: %w", ErrBadOptions, z, err)
			}
			z = canonicalZoneName(z)
		}
		sg.settings[z] = d
	}
	return &Provider{opts: o, store: st, signers: sg}, nil
}

// validHost checks an absolute name's syntax (letters, digits, '-', '_').
func validHost(name string) bool {
	return validateZoneName(strings.ToLower(strings.TrimSuffix(name, "."))) == nil
}

// DefaultDir is where zones live unless configured otherwise:
// $XDG_DATA_HOME/bulwark/zones, else $HOME/.local/share/bulwark/zones;
// "" when neither variable is set.
func DefaultDir(getenv func(string) string) string {
	return atomicfile.DataDir(getenv, "zones")
}

// Name is "local".
func (p *Provider) Name() string { return "local" }

// Dir is the data directory.
func (p *Provider) Dir() string { return p.store.dir }

// generation counts the changes made to zone files through this Provider.
func (p *Provider) generation() uint64 { return p.store.gen.Load() }

// zoneView turns a stored zone into the API's Zone.
func (p *Provider) zoneView(e *zoneEntry) dns.Zone {
	m := e.meta
	z := dns.Zone{
		ID: m.ID, Name: e.name, Created: m.Created, Mode: m.Mode, TTL: m.TTL,
		Labels: cloneLabels(m.Labels), Protection: m.Protection, Status: "ok",
		PrimaryNameservers: slices.Clone(m.PrimaryNameservers),
	}
	if m.Mode == dns.ModeSecondary {
		return z
	}
	z.AuthoritativeNameservers = &dns.AuthoritativeNameservers{
		Assigned: slices.Clone(m.Nameservers), Delegated: []string{}, DelegationStatus: "unknown",
	}
	if e.data == nil {
		z.Status = "error"
		return z
	}
	z.TTL = e.data.ttl
	z.RecordCount = e.data.recordCount()
	return z
}

// rrsetView turns a stored RRSet into the API's RRSet.
func rrsetView(e *zoneEntry, s *rrset) dns.RRSet {
	out := dns.RRSet{
		ID: s.key(), Name: s.name, Type: s.typ, Labels: map[string]string{},
		Records: make([]dns.Record, len(s.records)), Zone: e.meta.ID,
	}
	if s.ttl != nil {
		out.TTL = ptr(*s.ttl)
	}
	if rm := e.meta.RRSets[s.key()]; rm != nil {
		out.Labels = cloneLabels(rm.Labels)
		out.Protection.Change = rm.Protected
	}
	for i, r := range s.records {
		out.Records[i] = dns.Record{Value: r.value, Comment: r.comment}
	}
	return out
}

// primaryData returns the records of a primary zone, or the error the API
// gives for a secondary zone or the store gives for a broken zone file.
func primaryData(e *zoneEntry, what string) (*zoneData, error) {
	if e.meta.Mode == dns.ModeSecondary {
		return nil, errZoneMode("%s is not available for secondary zone %s", what, e.name)
	}
	if e.err != nil {
		return nil, errZonefile(e.name, e.err)
	}
	return e.data, nil
}

// mutate runs a change to one zone under the write locks: it re-reads the
// zone from disk, lets fn change it (fn reports whether records changed),
// records an action and commits. A nil command records no action (label
// updates).
func (p *Provider) mutate(ctx context.Context, ref, command string, fn func(e *zoneEntry) (bool, error)) (*dns.Action, error) {
	if err := p.warm(ctx, ref); err != nil {
		return nil, err
	}
	var action *dns.Action
	err := p.store.write(ctx, func() error {
		e, err := p.loadFresh(ctx, ref)
		if err != nil {
			return err
		}
		serial := currentSerial(e.data)
		changed, err := fn(e)
		if err != nil {
			return err
		}
		if changed {
			keepSerialRising(e.data, serial)
		}
		st, err := readState(p.store.dir)
		if err != nil {
			return err
		}
		if command != "" {
			a := p.store.newAction(st, command, e.meta.ID)
			action = &a
		}
		return p.store.commit(st, e, action, changed, p.opts.HistoryLimit)
	})
	return action, err
}

// loadFresh resolves ref and re-reads that zone from disk. The caller holds
// the write locks.
func (p *Provider) loadFresh(ctx context.Context, ref string) (*zoneEntry, error) {
	if err := p.store.adoptAll(ctx); err != nil {
		return nil, err
	}
	e, err := p.store.find(nil, ref)
	if err != nil {
		return nil, err
	}
	return p.store.fresh(e.name)
}

// warm loads the files of the zone ref names into the cache, parsing with
// no lock held, so that the mutation that follows finds them there instead
// of parsing under the write locks. Only the context's end stops it: any
// other failure is the mutation's to report.
func (p *Provider) warm(ctx context.Context, ref string) error {
	_ = p.view(ctx, ref, func(*zoneEntry) error { return nil })
	return ctx.Err()
}

// view runs fn on one zone under the read locks.
func (p *Provider) view(ctx context.Context, ref string, fn func(e *zoneEntry) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return p.store.read(ctx, func(tx *readTx) error {
		e, err := p.store.find(tx, ref)
		if err != nil {
			return err
		}
		return fn(e)
	})
}

// entry returns one zone as the read locks saw it. Its data is shared
// with the cache and with other calls: read it, never change it. Work on it
// needs no lock.
func (p *Provider) entry(ctx context.Context, ref string) (*zoneEntry, error) {
	var out *zoneEntry
	err := p.view(ctx, ref, func(e *zoneEntry) error {
		out = e
		return nil
	})
	return out, err
}

// currentSerial is the zone's SOA serial (0 when there is none).
func currentSerial(z *zoneData) uint32 {
	if z == nil {
		return 0
	}
	if soa, err := z.soa(); err == nil {
		return soa.Serial
	}
	return 0
}

// keepSerialRising lifts the SOA serial of changed data (which an import or
// set_records on the SOA may have lowered) back to at least was; the commit
// then bumps it past that.
func keepSerialRising(z *zoneData, was uint32) {
	if soa, err := z.soa(); err == nil && soa.Serial < was {
		soa.Serial = was
		z.setSOA(soa)
	}
}
