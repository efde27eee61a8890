package authdns

import (
	"fmt"
	"net"
	"strings"

	mdns "github.com/miekg/dns"
)

// transfer answers AXFR and IXFR: over TCP, signed with a key the server
// holds, else REFUSED.
func (s *Server) transfer(w mdns.ResponseWriter, req *mdns.Msg) {
	q := req.Question[0]
	_, tcp := w.RemoteAddr().(*net.TCPAddr)
	s.mu.Lock()
	z := s.zones[strings.ToLower(q.Name)]
	var stream [][]mdns.RR
	if z != nil {
		stream = s.plan(z, req)
	}
	s.mu.Unlock()
	if z == nil || !tcp || req.IsTsig() == nil {
		m := s.reply(w, req)
		m.Rcode = mdns.RcodeRefused
		if z == nil {
			m.Rcode = mdns.RcodeNotAuth
		}
		_ = w.WriteMsg(m)
		return
	}
	if q.Qtype == mdns.TypeAXFR {
		s.axfrs.Add(1)
	} else {
		s.ixfrs.Add(1)
	}
	if s.mode().Huge > 0 && q.Qtype == mdns.TypeAXFR {
		s.sendHuge(w, req, stream[0][0])
		return
	}
	s.send(w, req, stream)
}

// plan lays out the answer's records in messages. The caller holds s.mu.
func (s *Server) plan(z *zone, req *mdns.Msg) [][]mdns.RR {
	soa := mdns.Copy(z.rrs[0])
	var rrs []mdns.RR
	switch diffs, ok := z.since(req); {
	case req.Question[0].Qtype == mdns.TypeIXFR && ok && len(diffs) == 0:
		return [][]mdns.RR{{soa}} // current: the SOA alone
	case ok:
		rrs = append(rrs, soa)
		for _, d := range diffs {
			rrs = append(rrs, withSerial(soa, d.from))
			rrs = append(rrs, noSOA(d.del)...)
			rrs = append(rrs, withSerial(soa, d.to))
			rrs = append(rrs, noSOA(d.add)...)
		}
		rrs = append(rrs, soa)
	default:
		rrs = append(append(append(rrs, soa), z.rrs[1:]...), soa)
	}
	var out [][]mdns.RR
	for len(rrs) > 0 {
		n := min(s.opts.PerMessage, len(rrs))
		out = append(out, rrs[:n])
		rrs = rrs[n:]
	}
	return out
}

// since returns the journal from an IXFR's serial to now; ok is false for
// an AXFR, or when the journal does not reach back that far.
func (z *zone) since(req *mdns.Msg) ([]change, bool) {
	if req.Question[0].Qtype != mdns.TypeIXFR || len(req.Ns) != 1 {
		return nil, false
	}
	soa, ok := req.Ns[0].(*mdns.SOA)
	if !ok {
		return nil, false
	}
	if soa.Serial == z.serial() {
		return nil, true
	}
	for i, c := range z.journal {
		if c.from == soa.Serial {
			return z.journal[i:], true
		}
	}
	return nil, false
}

func withSerial(soa mdns.RR, serial uint32) mdns.RR {
	c := mdns.Copy(soa).(*mdns.SOA)
	c.Serial = serial
	return c
}

func noSOA(rrs []mdns.RR) []mdns.RR {
	var out []mdns.RR
	for _, rr := range rrs {
		if rr.Header().Rrtype != mdns.TypeSOA {
			out = append(out, rr)
		}
	}
	return out
}

// send writes the messages, signing each when the request was signed,
// and stops after TruncateAfter messages when that is set.
func (s *Server) send(w mdns.ResponseWriter, req *mdns.Msg, msgs [][]mdns.RR) {
	ch := make(chan *mdns.Envelope)
	tr := new(mdns.Transfer)
	done := make(chan error, 1)
	go func() { done <- tr.Out(w, s.unsignedIfAsked(req), ch) }()
	for i, rrs := range msgs {
		if n := s.mode().TruncateAfter; n > 0 && i == n {
			break
		}
		select {
		case ch <- &mdns.Envelope{RR: rrs}:
		case <-done:
			_ = w.Close()
			return
		}
	}
	close(ch)
	<-done
	_ = w.Close()
}

// sendHuge streams the SOA, Options.Huge generated TXT records and the
// SOA, making each message as it goes.
func (s *Server) sendHuge(w mdns.ResponseWriter, req *mdns.Msg, soa mdns.RR) {
	ch := make(chan *mdns.Envelope)
	done := make(chan error, 1)
	go func() { done <- new(mdns.Transfer).Out(w, s.unsignedIfAsked(req), ch) }()
	origin := soa.Header().Name
	msg := []mdns.RR{soa}
	flush := func() bool {
		select {
		case ch <- &mdns.Envelope{RR: msg}:
			s.hugeSent.Add(int64(len(msg)))
			msg = nil
			return true
		case <-done:
			return false
		}
	}
	for i, n := 0, s.mode().Huge; i < n; i++ {
		msg = append(msg, &mdns.TXT{Hdr: mdns.RR_Header{Name: fmt.Sprintf("r%d.%s", i, origin), Rrtype: mdns.TypeTXT, Class: mdns.ClassINET, Ttl: 300},
			Txt: []string{"filler"}})
		if len(msg) >= s.opts.PerMessage && !flush() {
			_ = w.Close()
			return
		}
	}
	msg = append(msg, soa)
	if flush() {
		close(ch)
		<-done
	}
	_ = w.Close()
}

// unsignedIfAsked drops the request's TSIG when answers must go unsigned
// (mdns.Transfer.Out signs whenever the request was signed).
func (s *Server) unsignedIfAsked(req *mdns.Msg) *mdns.Msg {
	if !s.mode().Unsigned {
		return req
	}
	c := req.Copy()
	c.Extra = nil
	return c
}
