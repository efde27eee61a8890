package localzone

import (
	"context"
	"crypto"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	mdns "github.com/miekg/dns"

	"github.com/bulwarkmcp/bulwark/servers/dns"
)

// DNSSEC signing, per zone (Options.DNSSEC). The responder signs a zone
// online: the zone file stays as it is, and every answer, NOTIFY-driven
// transfer and proof of non-existence comes from the signed form the
// responder builds when the file changes (dnssec_sign.go,
// dnssec_answer.go). One key per zone (a combined signing key: flags 257,
// it signs the DNSKEY RRset and the zone) is generated on first use and
// kept in <zone>.dnssec-key in the data directory, mode 0600, beside the
// zone; it stays when the zone is deleted, so a zone made again keeps its
// DS at the parent. The private key is never printed: not in a result, a
// log line or an error.

// Algorithms and denial of existence.
const (
	AlgECDSAP256 = "ecdsa-p256" // ECDSAP256SHA256, algorithm 13
	AlgEd25519   = "ed25519"    // ED25519, algorithm 15
	DenialNSEC   = "nsec"
	DenialNSEC3  = "nsec3" // no salt, no extra iterations (RFC 9276)
)

// DNSSEC is how one zone is signed.
type DNSSEC struct {
	// Algorithm is AlgECDSAP256 (the default) or AlgEd25519; it applies
	// when the key is made, and a key already made keeps its own.
	Algorithm string
	// Denial is DenialNSEC (the default) or DenialNSEC3.
	Denial string
}

func (d *DNSSEC) fill() error {
	if d.Algorithm == "" {
		d.Algorithm = AlgECDSAP256
	}
	if d.Denial == "" {
		d.Denial = DenialNSEC
	}
	switch {
	case d.Algorithm != AlgECDSAP256 && d.Algorithm != AlgEd25519:
		return fmt.Errorf("DNSSEC algorithm %q is not %s or %s", d.Algorithm, AlgECDSAP256, AlgEd25519)
	case d.Denial != DenialNSEC && d.Denial != DenialNSEC3:
		return fmt.Errorf("DNSSEC denial %q is not %s or %s", d.Denial, DenialNSEC, DenialNSEC3)
	}
	return nil
}

// keySuffix names a zone's key file.
const keySuffix = ".dnssec-key"

// zoneKey is a zone's signing key. Its private part never prints.
type zoneKey struct {
	dnskey *mdns.DNSKEY
	signer crypto.Signer
}

func (k *zoneKey) String() string   { return fmt.Sprintf("DNSSEC key %d", k.dnskey.KeyTag()) }
func (k *zoneKey) GoString() string { return k.String() }

// keyFile is the key's form on disk.
type keyFile struct {
	DNSKEY  string `json:"dnskey"`
	Private string `json:"private"` // BIND's Private-key-format
}

// signers holds the settings and the keys loaded, per zone.
type signers struct {
	dir      string
	noSync   bool
	settings map[string]DNSSEC // by zone name; "*": every zone
	mu       sync.Mutex
	keys     map[string]*zoneKey
}

// setting is zone's DNSSEC setting; ok is false for an unsigned zone.
func (s *signers) setting(zone string) (DNSSEC, bool) {
	if d, ok := s.settings[zone]; ok {
		return d, true
	}
	d, ok := s.settings["*"]
	return d, ok
}

// key returns zone's key, reading it from its file, or making and writing
// it when there is none. The caller holds the store's write locks when
// it may make one (create).
func (s *signers) key(zone string, create bool) (*zoneKey, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if k := s.keys[zone]; k != nil {
		return k, nil
	}
	k, err := s.read(zone)
	if errors.Is(err, fs.ErrNotExist) && create {
		k, err = s.generate(zone)
	}
	if err != nil {
		return nil, err
	}
	s.keys[zone] = k
	return k, nil
}

func (s *signers) read(zone string) (*zoneKey, error) {
	b, err := os.ReadFile(filepath.Join(s.dir, zone+keySuffix))
	if err != nil {
		return nil, err
	}
	var f keyFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("zone %s: the DNSSEC key file does not parse", zone)
	}
	rr, err := mdns.NewRR(f.DNSKEY)
	dk, ok := rr.(*mdns.DNSKEY)
	if err != nil || !ok || mdns.CanonicalName(dk.Hdr.Name) != zone+"." {
		return nil, fmt.Errorf("zone %s: the DNSSEC key file holds no DNSKEY of the zone", zone)
	}
	priv, err := dk.ReadPrivateKey(strings.NewReader(f.Private), zone+keySuffix)
	signer, isSigner := priv.(crypto.Signer)
	if err != nil || !isSigner {
		return nil, fmt.Errorf("zone %s: the DNSSEC key file's private key does not read", zone)
	}
	return &zoneKey{dnskey: dk, signer: signer}, nil
}

// generate makes a key with the zone's algorithm and writes it (0600).
func (s *signers) generate(zone string) (*zoneKey, error) {
	d, _ := s.setting(zone)
	dk := &mdns.DNSKEY{Hdr: mdns.RR_Header{Name: zone + ".", Rrtype: mdns.TypeDNSKEY, Class: mdns.ClassINET, Ttl: 3600},
		Flags: 257, Protocol: 3, Algorithm: mdns.ECDSAP256SHA256}
	if d.Algorithm == AlgEd25519 {
		dk.Algorithm = mdns.ED25519
	}
	priv, err := dk.Generate(256)
	if err != nil {
		return nil, fmt.Errorf("zone %s: making a DNSSEC key: %w", zone, err)
	}
	signer, ok := priv.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("zone %s: the DNSSEC key cannot sign", zone)
	}
	b, err := json.Marshal(keyFile{DNSKEY: dk.String(), Private: dk.PrivateKeyString(priv)})
	if err != nil {
		return nil, err
	}
	if err := writeAtomic(s.dir, zone+keySuffix, b, 0o600, s.noSync); err != nil {
		return nil, err
	}
	return &zoneKey{dnskey: dk, signer: signer}, nil
}

// signingKey is the key of a signed zone (made under the write locks when
// missing), or nil for an unsigned one.
func (p *Provider) signingKey(ctx context.Context, zone string) (*zoneKey, DNSSEC, error) {
	d, ok := p.signers.setting(zone)
	if !ok {
		return nil, DNSSEC{}, nil
	}
	if k, err := p.signers.key(zone, false); err == nil {
		return k, d, nil
	}
	var k *zoneKey
	err := p.store.write(ctx, func() error {
		var err error
		k, err = p.signers.key(zone, true)
		return err
	})
	return k, d, err
}

// dnssecView is a primary zone's DNSSEC state for get_zone: the key and
// the DS record the parent zone needs (the key is made when missing).
func (p *Provider) dnssecView(ctx context.Context, z dns.Zone) *dns.ZoneDNSSEC {
	if z.Mode != dns.ModePrimary {
		return nil
	}
	k, d, err := p.signingKey(ctx, z.Name)
	if err != nil || k == nil {
		return nil
	}
	ds := k.dnskey.ToDS(mdns.SHA256)
	return &dns.ZoneDNSSEC{Algorithm: mdns.AlgorithmToString[k.dnskey.Algorithm], Denial: d.Denial, KeyTag: k.dnskey.KeyTag(),
		DNSKEY: strings.TrimPrefix(k.dnskey.String(), k.dnskey.Hdr.String()), DS: []string{ds.String()}}
}

// signed is idx signed when its zone is to be signed (reusing the
// signatures of old, the index it replaces), else idx as it is.
func (r *Responder) signed(idx, old *zoneIndex) (*zoneIndex, error) {
	zone := strings.TrimSuffix(idx.origin, ".")
	k, d, err := r.p.signingKey(context.Background(), zone)
	if err != nil || k == nil {
		return idx, err
	}
	var sigs sigCache
	if old != nil && old.sec != nil {
		sigs = old.sec.sigs
	}
	s, err := signIndex(idx, k, d, r.now(), sigs)
	if err != nil {
		r.log.Error("signing the zone failed; it answers SERVFAIL", "zone", zone, "error", err)
	}
	return s, err
}

// resignDue bumps the serial of each signed zone with a signature that
// expires within sigRefresh: the zone is signed again (only what is due),
// and the new serial takes the signatures to the secondaries.
func (r *Responder) resignDue(ctx context.Context) {
	for origin, z := range r.current().zones {
		if z.sec == nil || !z.sec.expires.Before(r.now().Add(sigRefresh)) {
			continue
		}
		zone := strings.TrimSuffix(origin, ".")
		if err := r.p.bumpSerial(ctx, zone); err != nil {
			r.log.Warn("refreshing the zone's signatures failed", "zone", zone, "error", err)
			continue
		}
		r.log.Info("zone signed again: signatures were due to expire", "zone", zone, "expired_soonest", z.sec.expires.UTC().Format(time.RFC3339))
	}
}

// bumpSerial raises a zone's serial by its policy, changing nothing else.
func (p *Provider) bumpSerial(ctx context.Context, zone string) error {
	_, err := p.mutate(ctx, zone, "", func(e *zoneEntry) (bool, error) {
		if _, err := primaryData(e, "signing"); err != nil {
			return false, err
		}
		return true, nil
	})
	return err
}
