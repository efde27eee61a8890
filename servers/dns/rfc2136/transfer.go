package rfc2136

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"

	mdns "github.com/miekg/dns"

	"github.com/bulwarkmcp/bulwark/servers/dns"
	"github.com/bulwarkmcp/bulwark/servers/dns/zonefile"
)

// errFallback says an IXFR answer cannot be used: the zone is read by
// AXFR instead.
var errFallback = errors.New("rfc2136: ixfr unusable")

// read returns the zone as the server holds it now: the kept copy when its
// serial is the server's, else a transfer (IXFR from the kept copy, or
// AXFR).
func (p *Provider) read(ctx context.Context, ref string) (*zoneConf, *zoneState, error) {
	zc, err := p.lookup(ref)
	if err != nil {
		return nil, nil, err
	}
	serial, err := p.serial(ctx, zc)
	if err != nil {
		return nil, nil, err
	}
	have := p.cached(zc)
	if have != nil && have.soa.Serial == serial {
		return zc, have, nil
	}
	st, err := p.transfer(ctx, zc, have)
	if err != nil {
		return nil, nil, err
	}
	p.keep(st)
	return zc, st, nil
}

// serial asks the server for the zone's SOA serial.
func (p *Provider) serial(ctx context.Context, zc *zoneConf) (uint32, error) {
	m := new(mdns.Msg)
	m.SetQuestion(zc.origin, mdns.TypeSOA)
	m.RecursionDesired = false
	in, err := p.exchange(ctx, m)
	if err != nil {
		return 0, err
	}
	if in.Rcode != mdns.RcodeSuccess || !in.Authoritative {
		return 0, notServed(zc, in.Rcode)
	}
	for _, rr := range in.Answer {
		if soa, ok := rr.(*mdns.SOA); ok && mdns.CanonicalName(soa.Hdr.Name) == zc.origin {
			return soa.Serial, nil
		}
	}
	return 0, notServed(zc, in.Rcode)
}

// notServed is the error for a zone the server does not answer for.
func notServed(zc *zoneConf, rc int) error {
	return &dns.Error{Status: 422, Code: "not_authoritative",
		Message: fmt.Sprintf("the server is not authoritative for %s (it answered %s to the SOA query)", zc.name, rcodeName(rc))}
}

// transfer reads zc: by IXFR from have when there is a kept copy, else by
// AXFR. It takes one of the zonefile package's parse slots.
func (p *Provider) transfer(ctx context.Context, zc *zoneConf, have *zoneState) (*zoneState, error) {
	release, err := zonefile.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	if have != nil {
		st, err := p.ixfr(ctx, zc, have)
		if !errors.Is(err, errFallback) {
			return st, err
		}
	}
	m := new(mdns.Msg)
	m.SetAxfr(zc.origin)
	rrs, err := p.stream(ctx, zc, m)
	if err != nil {
		return nil, err
	}
	return fromAXFR(zc, rrs)
}

// ixfr reads the changes since have (RFC 1995). An answer in AXFR form is
// read as a whole zone; one that cannot be applied to have is errFallback.
func (p *Provider) ixfr(ctx context.Context, zc *zoneConf, have *zoneState) (*zoneState, error) {
	m := new(mdns.Msg)
	m.SetIxfr(zc.origin, have.soa.Serial, have.soa.Ns, have.soa.Mbox)
	rrs, err := p.stream(ctx, zc, m)
	var pe *dns.Error
	switch {
	case errors.As(err, &pe) && pe.Code == "transfer_unsupported":
		return nil, errFallback
	case err != nil:
		return nil, err
	case len(rrs) == 1:
		if rrs[0].(*mdns.SOA).Serial == have.soa.Serial {
			return have, nil
		}
		return nil, errFallback
	case isIncremental(rrs):
		st, err := have.apply(rrs)
		if err != nil {
			return nil, errFallback
		}
		return st, nil
	}
	return fromAXFR(zc, rrs)
}

// isIncremental: the second record of the answer is an SOA of another
// serial (RFC 1995 §4).
func isIncremental(rrs []mdns.RR) bool {
	soa, ok := rrs[1].(*mdns.SOA)
	return ok && soa.Serial != rrs[0].(*mdns.SOA).Serial
}

// stream reads the messages answering q until the end its form defines,
// charging every record and byte against the budget as it arrives. A
// refusal, a truncated transfer, a bad signature or the end of ctx ends
// it with an error, and nothing of it is used.
func (p *Provider) stream(ctx context.Context, zc *zoneConf, q *mdns.Msg) ([]mdns.RR, error) {
	c, err := p.dial(ctx)
	if err != nil {
		return nil, err
	}
	defer c.close()
	if err := c.send(q); err != nil {
		return nil, p.netError(ctx, err)
	}
	var rrs []mdns.RR
	var bytes int64
	end := xfrEnd{ixfr: q.Question[0].Qtype == mdns.TypeIXFR}
	for first := true; ; first = false {
		in, n, err := c.recv(q.Id)
		bytes += int64(n)
		if bytes > p.opts.MaxBytes {
			return nil, p.tooLarge(zc, fmt.Sprintf("more than %d bytes", p.opts.MaxBytes))
		}
		if err != nil {
			return nil, p.streamError(ctx, zc, err, len(rrs))
		}
		c.timersOnly = true
		if first && in.Rcode != mdns.RcodeSuccess {
			return nil, transferRefused(zc, q, in.Rcode)
		}
		if len(in.Answer) == 0 {
			return nil, upstreamMalformed("a message of the zone transfer holds no records")
		}
		for _, rr := range in.Answer {
			if len(rrs) > p.opts.MaxRecords {
				return nil, p.tooLarge(zc, fmt.Sprintf("more than %d records", p.opts.MaxRecords))
			}
			rrs = append(rrs, rr)
			done, err := end.feed(rr)
			if err != nil {
				return nil, err
			}
			if done {
				return rrs, nil
			}
		}
		if end.ixfr && len(rrs) == 1 {
			return rrs, nil // a lone SOA: the client is current, or must use AXFR
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
}

// xfrEnd finds the end of a transfer: in AXFR form the second SOA; an
// incremental answer ends with the third SOA of the new serial.
type xfrEnd struct {
	ixfr        bool
	n           int
	serial      uint32
	incremental bool
	seen        int
}

func (e *xfrEnd) feed(rr mdns.RR) (bool, error) {
	e.n++
	soa, isSOA := rr.(*mdns.SOA)
	switch {
	case e.n == 1 && !isSOA:
		return false, upstreamMalformed("the zone transfer does not start with the SOA")
	case e.n == 1:
		e.serial = soa.Serial
		return false, nil
	case e.n == 2 && e.ixfr && isSOA && soa.Serial != e.serial:
		e.incremental = true
		return false, nil
	case !isSOA:
		return false, nil
	case e.incremental:
		if soa.Serial == e.serial {
			e.seen++
		}
		return e.seen == 2, nil
	case soa.Serial != e.serial:
		return false, upstreamMalformed("the zone transfer ends with another serial than it started")
	}
	return true, nil
}

// streamError reports a failed read of a transfer: a connection closed
// before the closing SOA is a truncated transfer.
func (p *Provider) streamError(ctx context.Context, zc *zoneConf, err error, got int) error {
	var ne net.Error
	if ctx.Err() == nil && (errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) ||
		errors.As(err, &ne) && !ne.Timeout()) {
		return &dns.Error{Status: 502, Code: "transfer_failed",
			Message: fmt.Sprintf("the zone transfer of %s ended after %d records, before its closing SOA", zc.name, got)}
	}
	return p.netError(ctx, err)
}

// transferRefused maps the rcode of a transfer's first answer.
func transferRefused(zc *zoneConf, q *mdns.Msg, rc int) error {
	msg := fmt.Sprintf("the server answered %s to the %s of %s", rcodeName(rc), mdns.TypeToString[q.Question[0].Qtype], zc.name)
	switch rc {
	case mdns.RcodeRefused:
		return &dns.Error{Status: 403, Code: "transfer_refused", Message: msg}
	case mdns.RcodeNotAuth:
		return &dns.Error{Status: 422, Code: "not_authoritative", Message: msg}
	case mdns.RcodeNotImplemented, mdns.RcodeFormatError:
		if q.Question[0].Qtype == mdns.TypeIXFR {
			return &dns.Error{Status: 501, Code: "transfer_unsupported", Message: msg}
		}
	}
	return &dns.Error{Status: 502, Code: "transfer_failed", Message: msg}
}

// tooLarge is the error for a transfer over the budget.
func (p *Provider) tooLarge(zc *zoneConf, what string) error {
	return &dns.Error{Status: 413, Code: "zone_too_large",
		Message: fmt.Sprintf("the zone transfer of %s was stopped at %s (the zone-file budget)", zc.name, what)}
}
