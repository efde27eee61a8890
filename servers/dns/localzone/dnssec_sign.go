package localzone

import (
	"crypto/sha256"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	mdns "github.com/miekg/dns"
)

// Signature times: every signature is valid from an hour ago (clocks
// differ) for two weeks, and one with less than a week left is made again
// (the responder bumps the zone's serial for that, so its secondaries
// take the new signatures too).
const (
	sigBackdate = time.Hour
	sigValidity = 14 * 24 * time.Hour
	sigRefresh  = 7 * 24 * time.Hour
)

// signedZone is what signing adds to a zone's index.
type signedZone struct {
	denial string
	key    *mdns.DNSKEY
	// order is the names of the NSEC chain in canonical order (NSEC).
	order []string
	// nsec3 is the NSEC3 chain sorted by hash (NSEC3); the hashes of the
	// names asked for are computed per query.
	nsec3 []nsec3Entry
	// expires is the earliest expiration of the zone's signatures.
	expires time.Time
	// sigs are the signatures made, for the next signing to reuse.
	sigs sigCache
}

// nsec3Entry is one NSEC3 record, its signature, and its owner's hash.
type nsec3Entry struct {
	hash string // lower-case base32hex
	rrs  []mdns.RR
}

// sigCache keeps signatures by what they sign, so that a zone signed again
// after a change signs only what changed.
type sigCache map[[32]byte]*mdns.RRSIG

// signer signs one zone at one time.
type signer struct {
	k    *zoneKey
	now  time.Time
	old  sigCache
	used sigCache
	min  time.Time
	buf  []byte // for sigKey
}

// signIndex returns z signed with k: the DNSKEY (and NSEC3PARAM) at the
// apex, the denial chain, and a signature for every authoritative RRset;
// old are the signatures of the last signing. z itself is not changed.
func signIndex(z *zoneIndex, k *zoneKey, d DNSSEC, now time.Time, old sigCache) (*zoneIndex, error) {
	soa := z.soa()
	if soa == nil {
		return nil, fmt.Errorf("zone %s has no SOA", z.origin)
	}
	extra := []mdns.RR{withTTL(k.dnskey, soa.Hdr.Ttl)}
	if d.Denial == DenialNSEC3 {
		extra = append(extra, &mdns.NSEC3PARAM{Hdr: mdns.RR_Header{Name: z.origin, Rrtype: mdns.TypeNSEC3PARAM, Class: mdns.ClassINET},
			Hash: mdns.SHA1})
	}
	base := make([]mdns.RR, 0, len(z.all)+len(extra))
	for _, rr := range z.all {
		if t := rr.Header().Rrtype; t != mdns.TypeDNSKEY && t != mdns.TypeNSEC3PARAM && t != mdns.TypeRRSIG && t != mdns.TypeNSEC && t != mdns.TypeNSEC3 {
			base = append(base, rr)
		}
	}
	idx, err := buildIndex(z.origin, append(base, extra...))
	if err != nil {
		return nil, err
	}
	sg := &signer{k: k, now: now, old: old, used: sigCache{}, min: now.Add(sigValidity), buf: make([]byte, mdns.MaxMsgSize)}
	idx.sec = &signedZone{denial: d.Denial, key: k.dnskey}
	negTTL := min(soa.Hdr.Ttl, soa.Minttl)
	if d.Denial == DenialNSEC3 {
		err = idx.chainNSEC3(sg, negTTL)
	} else {
		err = idx.chainNSEC(negTTL)
	}
	if err == nil {
		err = idx.signAll(sg)
	}
	if err != nil {
		return nil, err
	}
	idx.sec.expires, idx.sec.sigs = sg.min, sg.used
	return idx, nil
}

func withTTL(rr mdns.RR, ttl uint32) mdns.RR {
	c := mdns.Copy(rr)
	c.Header().Ttl = ttl
	return c
}

// occluded reports whether name lies below a delegation (glue, not the
// zone's data).
func (z *zoneIndex) occluded(name string) bool {
	if !z.hasCuts {
		return false
	}
	for p := parentName(name); p != "" && p != z.origin && mdns.IsSubDomain(z.origin, p); p = parentName(p) {
		if n := z.nodes[p]; n != nil && n.cut {
			return true
		}
	}
	return false
}

// authoritative are the zone's names that are not below a delegation, in
// canonical order (RFC 4034 §6.1); withEmpty keeps empty non-terminals.
func (z *zoneIndex) authoritative(withEmpty bool) []string {
	var keyed []canonName
	for name, n := range z.nodes {
		if (withEmpty || len(n.sets) > 0) && !z.occluded(name) {
			keyed = append(keyed, canonName{name: name, labels: canonicalLabels(name)})
		}
	}
	slices.SortFunc(keyed, func(a, b canonName) int { return compareLabels(a.labels, b.labels) })
	names := make([]string, len(keyed))
	for i, k := range keyed {
		names[i] = k.name
	}
	return names
}

// canonName is a name with its labels in canonical comparison form.
type canonName struct {
	name   string
	labels []string
}

// typesAt are the types of a node that its NSEC or NSEC3 lists: at a
// delegation only NS and DS.
func typesAt(n *node) []uint16 {
	var out []uint16
	for _, s := range n.sets {
		if !n.cut || s.typ == mdns.TypeNS || s.typ == mdns.TypeDS {
			out = append(out, s.typ)
		}
	}
	return out
}

// chainNSEC adds an NSEC record to every authoritative name (RFC 4034 §4).
func (z *zoneIndex) chainNSEC(ttl uint32) error {
	names := z.authoritative(false)
	for i, name := range names {
		n := z.nodes[name]
		types := append(typesAt(n), mdns.TypeNSEC, mdns.TypeRRSIG)
		slices.Sort(types)
		nsec := &mdns.NSEC{Hdr: mdns.RR_Header{Name: name, Rrtype: mdns.TypeNSEC, Class: mdns.ClassINET, Ttl: ttl},
			NextDomain: names[(i+1)%len(names)], TypeBitMap: types}
		n.sets = append(n.sets, typedSet{typ: mdns.TypeNSEC, rrs: []mdns.RR{nsec}})
		z.all = append(z.all, nsec)
	}
	z.sec.order = names
	return nil
}

// chainNSEC3 builds the NSEC3 chain (RFC 5155) over every authoritative
// name and empty non-terminal: SHA-1, no salt, no extra iterations, no
// opt-out. An insecure delegation's NSEC3 lists only NS.
func (z *zoneIndex) chainNSEC3(sg *signer, ttl uint32) error {
	names := z.authoritative(true)
	entries := make([]nsec3Entry, len(names))
	for i, name := range names {
		entries[i].hash = strings.ToLower(mdns.HashName(name, mdns.SHA1, 0, ""))
	}
	types := make(map[string][]uint16, len(names))
	for i, name := range names {
		t := typesAt(z.nodes[name])
		if len(t) > 0 && !(len(t) == 1 && t[0] == mdns.TypeNS && z.nodes[name].cut) {
			t = append(t, mdns.TypeRRSIG)
		}
		slices.Sort(t)
		types[entries[i].hash] = t
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].hash < entries[j].hash })
	for i := range entries {
		e := &entries[i]
		rr := &mdns.NSEC3{Hdr: mdns.RR_Header{Name: e.hash + "." + z.origin, Rrtype: mdns.TypeNSEC3, Class: mdns.ClassINET, Ttl: ttl},
			Hash: mdns.SHA1, NextDomain: strings.ToUpper(entries[(i+1)%len(entries)].hash), TypeBitMap: types[e.hash]}
		rr.HashLength = 20
		sig, err := sg.sign([]mdns.RR{rr})
		if err != nil {
			return err
		}
		e.rrs = []mdns.RR{rr, sig}
		z.all = append(z.all, rr, sig)
	}
	z.sec.nsec3 = entries
	return nil
}

// signAll signs every authoritative RRset: not the NS records of a
// delegation, nor glue.
func (z *zoneIndex) signAll(sg *signer) error {
	for name, n := range z.nodes {
		if z.occluded(name) {
			continue
		}
		for _, s := range n.sets {
			if n.cut && s.typ != mdns.TypeDS && s.typ != mdns.TypeNSEC {
				continue
			}
			sig, err := sg.sign(s.rrs)
			if err != nil {
				return err
			}
			if n.sigs == nil {
				n.sigs = map[uint16][]mdns.RR{}
			}
			n.sigs[s.typ] = []mdns.RR{sig}
			z.all = append(z.all, sig)
		}
	}
	return nil
}

// sign returns the RRSIG of rrset: the one of the last signing when it
// signs the same records and has more than sigRefresh left, else a new one.
func (sg *signer) sign(rrset []mdns.RR) (mdns.RR, error) {
	key := sg.sigKey(rrset)
	if old := sg.old[key]; old != nil && sg.now.Add(sigRefresh).Before(sigTime(old.Expiration)) {
		sg.keep(key, old)
		return old, nil
	}
	h := rrset[0].Header()
	sig := &mdns.RRSIG{Hdr: mdns.RR_Header{Ttl: h.Ttl}, Algorithm: sg.k.dnskey.Algorithm, KeyTag: sg.k.dnskey.KeyTag(),
		SignerName: sg.k.dnskey.Hdr.Name, Inception: uint32(sg.now.Add(-sigBackdate).Unix()), Expiration: uint32(sg.now.Add(sigValidity).Unix())}
	if err := sig.Sign(sg.k.signer, rrset); err != nil {
		return nil, fmt.Errorf("signing %s/%s: %w", h.Name, mdns.TypeToString[h.Rrtype], err)
	}
	sig.Hdr.Ttl = h.Ttl
	sg.keep(key, sig)
	return sig, nil
}

func (sg *signer) keep(key [32]byte, sig *mdns.RRSIG) {
	sg.used[key] = sig
	if t := sigTime(sig.Expiration); t.Before(sg.min) {
		sg.min = t
	}
}

// sigTime reads an RRSIG time (seconds, RFC 1982 arithmetic near now).
func sigTime(t uint32) time.Time { return time.Unix(int64(t), 0) }

// sigKey identifies an RRset's content, records in order: owner, type,
// TTL and data, in wire form (a set whose records come in another order
// is signed again, which is only slower).
func (sg *signer) sigKey(rrset []mdns.RR) [32]byte {
	h := sha256.New()
	for _, rr := range rrset {
		n, err := mdns.PackRR(rr, sg.buf, 0, nil, false)
		if err != nil {
			h.Write([]byte(rr.String())) // cannot happen for parsed records
			continue
		}
		h.Write(sg.buf[:n])
	}
	var k [32]byte
	h.Sum(k[:0])
	return k
}

// canonicalCompare orders names as RFC 4034 §6.1 does: label by label
// from the right, each compared as lower-case bytes.
func canonicalCompare(a, b string) int {
	return compareLabels(canonicalLabels(a), canonicalLabels(b))
}

// canonicalLabels are name's labels, rightmost first, lower case and
// unescaped: its form for canonical comparison.
func canonicalLabels(name string) []string {
	ls := mdns.SplitDomainName(strings.ToLower(name))
	slices.Reverse(ls)
	for i, l := range ls {
		ls[i] = unescape(l)
	}
	return ls
}

func compareLabels(a, b []string) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if c := strings.Compare(a[i], b[i]); c != 0 {
			return c
		}
	}
	return len(a) - len(b)
}

// unescape turns a label's \DDD and \X escapes into its bytes.
func unescape(l string) string {
	if !strings.Contains(l, `\`) {
		return l
	}
	var b strings.Builder
	for i := 0; i < len(l); i++ {
		if l[i] != '\\' || i+1 >= len(l) {
			b.WriteByte(l[i])
			continue
		}
		if i+3 < len(l) && isDDD(l[i+1:]) {
			v := int(l[i+1]-'0')*100 + int(l[i+2]-'0')*10 + int(l[i+3]-'0')
			b.WriteByte(byte(v))
			i += 3
			continue
		}
		b.WriteByte(l[i+1])
		i++
	}
	return b.String()
}

func isDDD(s string) bool {
	return len(s) >= 3 && s[0] >= '0' && s[0] <= '2' && s[1] >= '0' && s[1] <= '9' && s[2] >= '0' && s[2] <= '9'
}
