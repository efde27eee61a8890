package rfc2136

import (
	"errors"
	"fmt"
	"hash/fnv"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	mdns "github.com/miekg/dns"

	"github.com/bulwarkmcp/bulwark/servers/dns"
	"github.com/bulwarkmcp/bulwark/servers/dns/tsig"
	"github.com/bulwarkmcp/bulwark/servers/dns/zonefile"
)

var _ dns.Provider = (*Provider)(nil)

// Defaults of Options' zero values.
const (
	// DefaultTimeout bounds one exchange with the server, or one message of
	// a transfer.
	DefaultTimeout = 10 * time.Second
	// DefaultTTL is the TTL of records added without one.
	DefaultTTL = 3600
	// MaxZones is the most zones one provider manages.
	MaxZones = 1000
)

// ErrOptions wraps every error New reports about its Options.
var ErrOptions = errors.New("rfc2136: bad options")

// Options configure a Provider.
type Options struct {
	// Server is the primary's address, host:port; port 53 when omitted.
	Server string
	// Zones are the zones the provider manages: the protocol has no zone
	// listing. Names, case and a final dot aside.
	Zones []string
	// Key signs every message and must sign every answer (required).
	Key tsig.Key
	// Timeout bounds one exchange, or one message of a transfer;
	// DefaultTimeout when zero.
	Timeout time.Duration
	// DefaultTTL is the TTL of records added without one; DefaultTTL
	// when zero.
	DefaultTTL int
	// MaxRecords bounds the records of one transfer; zonefile.MaxRecords,
	// the local store's zone-file budget, when zero.
	MaxRecords int
	// MaxBytes bounds the bytes of one transfer on the wire;
	// zonefile.MaxBytes when zero.
	MaxBytes int64
	// CacheRecords bounds the records kept between calls over all zones;
	// four times MaxRecords when zero.
	CacheRecords int
}

// Provider manages the configured zones of one server over RFC 2136.
type Provider struct {
	opts  Options
	ring  *tsig.Keyring
	zones []*zoneConf
	// byName and byID find a configured zone.
	byName map[string]*zoneConf
	byID   map[int64]*zoneConf

	mu    sync.Mutex
	cache map[string]*zoneState // by name
	kept  int                   // records in cache

	// afterRead, set by tests only, runs between a change's read and its
	// update.
	afterRead func()
}

// zoneConf is one configured zone.
type zoneConf struct {
	name   string // "example.com"
	origin string // "example.com."
	id     int64
}

// New checks opts and returns the Provider. It contacts no server.
func New(opts Options) (*Provider, error) {
	if err := opts.fill(); err != nil {
		return nil, err
	}
	ring, err := tsig.NewKeyring(opts.Key)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrOptions, err)
	}
	p := &Provider{opts: opts, ring: ring, byName: map[string]*zoneConf{}, byID: map[int64]*zoneConf{}, cache: map[string]*zoneState{}}
	for _, z := range opts.Zones {
		name := strings.TrimSuffix(strings.ToLower(strings.TrimSpace(z)), ".")
		if _, ok := mdns.IsDomainName(name); !ok || name == "" || isDigits(name) {
			return nil, fmt.Errorf("%w: zone %q is not a domain name", ErrOptions, z)
		}
		if p.byName[name] != nil {
			return nil, fmt.Errorf("%w: zone %q is listed twice", ErrOptions, z)
		}
		zc := &zoneConf{name: name, origin: mdns.Fqdn(name), id: zoneID(name)}
		if other := p.byID[zc.id]; other != nil {
			return nil, fmt.Errorf("%w: zones %q and %q have the same id; list one of them", ErrOptions, other.name, name)
		}
		p.zones = append(p.zones, zc)
		p.byName[name], p.byID[zc.id] = zc, zc
	}
	return p, nil
}

// fill checks the options and sets the defaults.
func (o *Options) fill() error {
	if o.Key.Name() == "" {
		return fmt.Errorf("%w: a TSIG key is required: the server must know who changes its zones", ErrOptions)
	}
	if len(o.Zones) == 0 || len(o.Zones) > MaxZones {
		return fmt.Errorf("%w: list 1 to %d zones (the protocol cannot list them)", ErrOptions, MaxZones)
	}
	host, port, err := net.SplitHostPort(o.Server)
	if err != nil {
		host, port = o.Server, "53"
	}
	if n, err := strconv.Atoi(port); host == "" || err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("%w: server %q is not host:port", ErrOptions, o.Server)
	}
	o.Server = net.JoinHostPort(host, port)
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.DefaultTTL == 0 {
		o.DefaultTTL = DefaultTTL
	}
	if o.DefaultTTL < 60 || o.DefaultTTL > 2147483647 {
		return fmt.Errorf("%w: default TTL %d is outside 60..2147483647", ErrOptions, o.DefaultTTL)
	}
	if o.MaxRecords <= 0 {
		o.MaxRecords = zonefile.MaxRecords
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = zonefile.MaxBytes
	}
	if o.CacheRecords <= 0 {
		o.CacheRecords = 4 * o.MaxRecords
	}
	return nil
}

// zoneID is a zone's id: 53 bits of FNV-1a of its name (a JSON number
// every client reads exactly), never 0.
func zoneID(name string) int64 {
	h := fnv.New64a()
	h.Write([]byte(name))
	id := int64(h.Sum64() & (1<<53 - 1))
	if id == 0 {
		id = 1
	}
	return id
}

func isDigits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}

// Name is "rfc2136".
func (p *Provider) Name() string { return "rfc2136" }

// Server is the address of the server the provider manages.
func (p *Provider) Server() string { return p.opts.Server }

// ZoneNames are the configured zones, in the order given.
func (p *Provider) ZoneNames() []string {
	out := make([]string, len(p.zones))
	for i, z := range p.zones {
		out[i] = z.name
	}
	return out
}

// lookup finds a configured zone by id or name.
func (p *Provider) lookup(ref string) (*zoneConf, error) {
	var zc *zoneConf
	if isDigits(ref) {
		if id, err := strconv.ParseInt(ref, 10, 64); err == nil {
			zc = p.byID[id]
		}
	} else {
		zc = p.byName[strings.TrimSuffix(strings.ToLower(ref), ".")]
	}
	if zc == nil {
		return nil, &dns.Error{Status: 404, Code: "not_found", Message: "zone not found: it is not one of the zones this server is configured to manage"}
	}
	return zc, nil
}

// keep stores a zone's state, letting other zones go while the kept
// records are over the bound.
func (p *Provider) keep(st *zoneState) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if old := p.cache[st.zone.name]; old != nil {
		p.kept -= old.records
	}
	p.cache[st.zone.name] = st
	p.kept += st.records
	names := make([]string, 0, len(p.cache))
	for n := range p.cache {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		if p.kept <= p.opts.CacheRecords {
			break
		}
		if n != st.zone.name {
			p.kept -= p.cache[n].records
			delete(p.cache, n)
		}
	}
}

// cached returns the state read before, or nil.
func (p *Provider) cached(zc *zoneConf) *zoneState {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cache[zc.name]
}
