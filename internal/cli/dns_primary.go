package cli

import (
	"fmt"
	"log/slog"
	"net/netip"
	"strings"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/servers/dns/localzone"
)

// registerPrimary adds the settings of the local store as a hidden
// primary: its secondaries, and the serial policy of its zones.
func (c *dnsFlags) registerPrimary(f *flags) {
	f.List(&c.secondaries, "secondaries", "BULWARK_DNS_SECONDARIES", "local: the secondaries that take the zones by AXFR/IXFR and hear NOTIFY, as `ADDR[:PORT]@KEY` (the key's name in -tsig-key-file; port 53 when omitted); ZONE=ADDR[:PORT]@KEY for one zone only. Transfers are refused to anyone else")
	f.List(&c.serialPolicy, "serial-policy", "BULWARK_DNS_SERIAL_POLICY", "local: how a change bumps a zone's SOA serial: date (YYYYMMDDnn, the default) or increment; ZONE=POLICY for one zone")
	f.List(&c.dnssec, "dnssec", "BULWARK_DNS_DNSSEC", "local: the zones to sign online, as `ZONE[=ALGORITHM[/DENIAL]]` (* for every zone; ecdsa-p256 or ed25519, default ecdsa-p256; nsec or nsec3, default nsec). The key is made in the data directory; get_zone shows the DS for the parent")
}

// parseDNSSEC reads -dnssec entries.
func parseDNSSEC(list []string) map[string]localzone.DNSSEC {
	out := map[string]localzone.DNSSEC{}
	for _, e := range list {
		zone, spec, _ := strings.Cut(e, "=")
		alg, denial, _ := strings.Cut(spec, "/")
		out[zone] = localzone.DNSSEC{Algorithm: alg, Denial: denial}
	}
	return out
}

// parseSecondaries reads -secondaries entries.
func parseSecondaries(list []string) ([]localzone.Secondary, error) {
	var out []localzone.Secondary
	for _, e := range list {
		zone, rest, scoped := strings.Cut(e, "=")
		if !scoped {
			zone, rest = "", e
		}
		i := strings.LastIndexByte(rest, '@')
		if i < 0 {
			return nil, fmt.Errorf("%w: -secondaries %q: write ADDR[:PORT]@KEY", errUsage, e)
		}
		addr, err := addrPort(rest[:i])
		if err != nil {
			return nil, fmt.Errorf("%w: -secondaries %q: %v", errUsage, e, err)
		}
		s := localzone.Secondary{Addr: addr, Key: rest[i+1:]}
		if scoped {
			s.Zones = []string{zone}
		}
		out = append(out, s)
	}
	return out, nil
}

// addrPort reads an address with an optional port (53 when omitted).
func addrPort(s string) (netip.AddrPort, error) {
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap, nil
	}
	a, err := netip.ParseAddr(strings.Trim(s, "[]"))
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("%q is not an IP address with an optional port", s)
	}
	return netip.AddrPortFrom(a, 53), nil
}

// parseSerialPolicy reads -serial-policy: a default, and ZONE=POLICY.
func parseSerialPolicy(list []string) (localzone.SerialPolicy, map[string]localzone.SerialPolicy) {
	var def localzone.SerialPolicy
	zones := map[string]localzone.SerialPolicy{}
	for _, e := range list {
		if zone, p, ok := strings.Cut(e, "="); ok {
			zones[zone] = localzone.SerialPolicy(p)
		} else {
			def = localzone.SerialPolicy(e)
		}
	}
	return def, zones
}

// responderOptions are the responder's settings: with -secondaries, those
// of a hidden primary, whose keys come from -tsig-key-file and are
// declared to the kernel's scrubber.
func (c *dnsFlags) responderOptions(opts *kernel.Options, logger *slog.Logger, addr string, beyond bool) (*localzone.ResponderOptions, error) {
	secs, err := parseSecondaries(c.secondaries)
	if err != nil || len(secs) == 0 {
		return nil, err
	}
	ring, err := c.keyring()
	if err != nil {
		return nil, err
	}
	if ring == nil {
		return nil, fmt.Errorf("%w: -secondaries need their TSIG keys: -tsig-key-file FILE (tsig-keygen -a hmac-sha256 NAME > FILE), or BULWARK_DNS_TSIG_KEY", errUsage)
	}
	if err := localzone.CheckSecondaries(secs, ring); err != nil {
		return nil, fmt.Errorf("%w: %v", errUsage, err)
	}
	declareKeys(opts, ring)
	for _, s := range secs {
		if !beyond && !s.Addr.Addr().IsLoopback() {
			logger.Warn("the DNS responder listens on loopback only: a secondary elsewhere cannot transfer from it", "secondary", s.Addr.String(), "fix", "set -dns-listen to an address the secondary reaches")
		}
		logger.Info("hidden primary: secondary", "addr", s.Addr.String(), "key", s.Key, "zones", zonesOrAll(s.Zones))
	}
	logger.Info("hidden primary: zone transfers to the secondaries only, signed with their keys", "listen", addr)
	return &localzone.ResponderOptions{Secondaries: secs, Keys: ring, Logger: logger}, nil
}

func zonesOrAll(z []string) string {
	if len(z) == 0 {
		return "all"
	}
	return strings.Join(z, ",")
}
