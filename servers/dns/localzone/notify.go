package localzone

import (
	"context"
	"strings"
	"time"

	mdns "github.com/miekg/dns"
)

// NOTIFY (RFC 1996): each secondary hears of every new serial of each zone
// it takes, signed with its key. A NOTIFY goes over UDP and is sent again,
// each wait twice the one before, until the secondary answers it or
// maxNotifyTries have gone by; a newer serial takes over.
const (
	maxNotifyTries = 5
	notifyTimeout  = time.Second
)

// notifyLoop sends NOTIFY for every zone whose serial changed — at start
// (the secondaries may have missed changes made while the responder was
// down), after each change made through the Provider and at each recheck
// of the zone files — until ctx ends.
func (r *Responder) notifyLoop(ctx context.Context) {
	sent := map[string]uint32{}
	t := time.NewTicker(r.recheck)
	defer t.Stop()
	for {
		s := r.current()
		for origin, z := range s.zones {
			soa := z.soa()
			if z.broken || soa == nil || sent[origin] == soa.Serial {
				continue
			}
			sent[origin] = soa.Serial
			for _, sec := range r.secondaries {
				if sec.takes(origin) {
					go r.notify(ctx, origin, soa.Serial, sec)
				}
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-r.p.store.changed:
		case <-t.C:
			r.refresh(true)
			r.resignDue(ctx)
		}
	}
}

// notify tells one secondary that zone has serial, until it answers.
func (r *Responder) notify(ctx context.Context, origin string, serial uint32, sec Secondary) {
	key, _ := r.keys.Key(sec.Key)
	c := &mdns.Client{Net: "udp", Timeout: notifyTimeout, TsigProvider: r.keys}
	wait := r.notifyWait
	for try := 1; try <= maxNotifyTries; try++ {
		if cur := r.current().zones[origin]; cur == nil || cur.soa() == nil || cur.soa().Serial != serial {
			return // a newer serial has its own NOTIFY
		}
		m := new(mdns.Msg)
		m.SetNotify(origin)
		m.Answer = []mdns.RR{r.current().zones[origin].soa()}
		m.SetTsig(key.Name(), key.WireAlgorithm(), 300, time.Now().Unix())
		in, _, err := c.ExchangeContext(ctx, m, sec.Addr.String())
		if err == nil && in.Rcode == mdns.RcodeSuccess {
			r.log.Info("NOTIFY answered", "zone", strings.TrimSuffix(origin, "."), "serial", serial, "secondary", sec.Addr.String())
			return
		}
		reason := "no answer"
		if err != nil {
			reason = err.Error()
		} else {
			reason = mdns.RcodeToString[in.Rcode]
		}
		r.log.Warn("NOTIFY not answered", "zone", strings.TrimSuffix(origin, "."), "serial", serial, "secondary", sec.Addr.String(),
			"try", try, "reason", reason)
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait *= 2
	}
}
