package localzone

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"slices"
	"strings"
	"time"

	mdns "github.com/miekg/dns"

	"github.com/bulwarkmcp/bulwark/servers/dns/tsig"
)

// Secondary is a server that takes zones from the responder by zone
// transfer: with secondaries configured the responder is the zones' hidden
// primary. Only a secondary's address may transfer, only over TCP, and
// only signed with its TSIG key; every other transfer is refused and
// logged.
type Secondary struct {
	// Addr is where NOTIFY goes (port 53 by convention); transfers are
	// taken from its address, any port.
	Addr netip.AddrPort
	// Key names its TSIG key in ResponderOptions.Keys.
	Key string
	// Zones are the zones it takes (names); empty: every zone.
	Zones []string
}

// takes reports whether the secondary takes zone (absolute, lower case).
func (s Secondary) takes(origin string) bool {
	return len(s.Zones) == 0 || slices.ContainsFunc(s.Zones, func(z string) bool { return canonicalZoneName(z)+"." == origin })
}

// ErrSecondaries wraps every error CheckSecondaries reports.
var ErrSecondaries = errors.New("localzone: secondaries")

// CheckSecondaries checks that every secondary has an address and a key
// that keys holds, and names valid zones.
func CheckSecondaries(secs []Secondary, keys *tsig.Keyring) error {
	for _, s := range secs {
		if !s.Addr.IsValid() || s.Addr.Port() == 0 {
			return fmt.Errorf("%w: %v is not an address and port", ErrSecondaries, s.Addr)
		}
		if _, ok := keys.Key(s.Key); !ok {
			return fmt.Errorf("%w: %v: key %q is not in the key file", ErrSecondaries, s.Addr, s.Key)
		}
		for _, z := range s.Zones {
			if err := validateZoneName(canonicalZoneName(z)); err != nil {
				return fmt.Errorf("%w: %v: zone %q: %v", ErrSecondaries, s.Addr, z, err)
			}
		}
	}
	return nil
}

// maxTransferMessage is the size a transfer message is filled to (a DNS
// message over TCP holds 65,535 bytes; room is left for the TSIG record).
const maxTransferMessage = 60_000

// transfer answers AXFR and IXFR: to a listed secondary of the zone, over
// TCP, signed with its key; REFUSED, and logged, for anyone else.
func (r *Responder) transfer(w mdns.ResponseWriter, req *mdns.Msg) {
	q := req.Question[0]
	origin := strings.ToLower(q.Name)
	kind := mdns.TypeToString[q.Qtype]
	if reason := r.transferDenied(w, req, origin); reason != "" {
		r.log.Warn("zone transfer refused", "zone", strings.TrimSuffix(origin, "."), "type", kind, "from", w.RemoteAddr().String(), "reason", reason)
		m := r.reply(w, req)
		m.Rcode = mdns.RcodeRefused
		_ = w.WriteMsg(m)
		return
	}
	s := r.current()
	z := s.zones[origin]
	if z == nil || z.broken {
		m := r.reply(w, req)
		m.Rcode = mdns.RcodeServerFailure
		_ = w.WriteMsg(m)
		return
	}
	rrs, form := transferRecords(z, s.journals[origin], req)
	ch := make(chan *mdns.Envelope)
	done := make(chan error, 1)
	go func() { done <- new(mdns.Transfer).Out(w, req, ch) }()
	for _, batch := range batches(rrs) {
		select {
		case ch <- &mdns.Envelope{RR: batch}:
		case err := <-done:
			r.log.Warn("zone transfer ended early", "zone", strings.TrimSuffix(origin, "."), "type", kind, "to", w.RemoteAddr().String(), "error", err)
			_ = w.Close()
			return
		}
	}
	close(ch)
	err := <-done
	_ = w.Close()
	r.log.Info("zone transfer", "zone", strings.TrimSuffix(origin, "."), "type", kind, "form", form, "serial", z.soa().Serial,
		"records", len(rrs), "to", w.RemoteAddr().String(), "error", err)
}

// transferDenied is why the transfer may not go ahead ("" when it may).
func (r *Responder) transferDenied(w mdns.ResponseWriter, req *mdns.Msg, origin string) string {
	if _, tcp := w.RemoteAddr().(*net.TCPAddr); !tcp {
		return "over UDP (transfers go over TCP)"
	}
	from, _ := netip.ParseAddrPort(w.RemoteAddr().String())
	var listed []Secondary
	for _, s := range r.secondaries {
		if s.Addr.Addr().Unmap() == from.Addr().Unmap() && s.takes(origin) {
			listed = append(listed, s)
		}
	}
	t := req.IsTsig()
	switch {
	case len(listed) == 0:
		return "not a secondary of this zone"
	case t == nil:
		return "not signed with the secondary's TSIG key"
	case w.TsigStatus() != nil:
		return "bad TSIG signature"
	}
	for _, s := range listed {
		if k, _ := r.keys.Key(s.Key); k.Name() == strings.ToLower(t.Hdr.Name) {
			return ""
		}
	}
	return fmt.Sprintf("signed with key %q, not the secondary's", bound(t.Hdr.Name))
}

// transferRecords are the records of the answer and its form: the changes
// since the client's serial (IXFR, RFC 1995 §4) when the journal has them,
// the SOA alone when the client is current, else the whole zone.
func transferRecords(z *zoneIndex, journal []change, req *mdns.Msg) ([]mdns.RR, string) {
	soa := z.soa()
	if req.Question[0].Qtype == mdns.TypeIXFR && len(req.Ns) == 1 {
		if have, ok := req.Ns[0].(*mdns.SOA); ok {
			if have.Serial == soa.Serial {
				return []mdns.RR{soa}, "current"
			}
			if changes, ok := since(journal, have.Serial); ok {
				return incremental(soa, changes), "incremental"
			}
		}
	}
	rrs := make([]mdns.RR, 0, len(z.all)+1)
	rrs = append(rrs, soa)
	for _, rr := range z.all {
		if rr.Header().Rrtype != mdns.TypeSOA {
			rrs = append(rrs, rr)
		}
	}
	return append(rrs, soa), "full"
}

// incremental lays out the changes as RFC 1995 §4 does.
func incremental(soa *mdns.SOA, changes []change) []mdns.RR {
	withSerial := func(n uint32) mdns.RR {
		c := mdns.Copy(soa).(*mdns.SOA)
		c.Serial = n
		return c
	}
	rrs := []mdns.RR{soa}
	for _, c := range changes {
		rrs = append(rrs, withSerial(c.from))
		rrs = append(rrs, c.del...)
		rrs = append(rrs, withSerial(c.to))
		rrs = append(rrs, c.add...)
	}
	return append(rrs, soa)
}

// batches cuts rrs into messages of at most maxTransferMessage bytes.
func batches(rrs []mdns.RR) [][]mdns.RR {
	var out [][]mdns.RR
	start, size := 0, 0
	for i, rr := range rrs {
		n := mdns.Len(rr)
		if size+n > maxTransferMessage && i > start {
			out = append(out, rrs[start:i])
			start, size = i, 0
		}
		size += n
	}
	return append(out, rrs[start:])
}

// reply starts the answer to req, signed when req was signed with a key
// that verified (RFC 8945: the answer to a signed request is signed).
func (r *Responder) reply(w mdns.ResponseWriter, req *mdns.Msg) *mdns.Msg {
	m := new(mdns.Msg)
	m.SetReply(req)
	r.sign(w, req, m)
	return m
}

// sign signs m when req was signed with a key that verified.
func (r *Responder) sign(w mdns.ResponseWriter, req, m *mdns.Msg) {
	if t := req.IsTsig(); t != nil && r.keys != nil && w.TsigStatus() == nil {
		m.SetTsig(t.Hdr.Name, t.Algorithm, t.Fudge, time.Now().Unix())
	}
}

// badSignature answers a request whose TSIG failed (RFC 8945 §5.2):
// NOTAUTH with the TSIG error, unsigned; and logs it.
func (r *Responder) badSignature(w mdns.ResponseWriter, req *mdns.Msg, t *mdns.TSIG) {
	code := uint16(mdns.RcodeBadSig)
	if _, ok := r.keys.Key(t.Hdr.Name); !ok {
		code = mdns.RcodeBadKey
	}
	r.log.Warn("request with a bad TSIG signature refused", "from", w.RemoteAddr().String(), "key", bound(t.Hdr.Name),
		"error", mdns.RcodeToString[int(code)])
	m := new(mdns.Msg)
	m.SetRcode(req, mdns.RcodeNotAuth)
	m.Extra = append(m.Extra, &mdns.TSIG{Hdr: mdns.RR_Header{Name: t.Hdr.Name, Rrtype: mdns.TypeTSIG, Class: mdns.ClassANY},
		Algorithm: t.Algorithm, TimeSigned: t.TimeSigned, Fudge: t.Fudge, OrigId: req.Id, Error: code})
	if b, err := m.Pack(); err == nil {
		_, _ = w.Write(b)
	}
}

// discard is the logger when none is given.
var discard = slog.New(slog.DiscardHandler)
