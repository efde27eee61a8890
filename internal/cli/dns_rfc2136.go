package cli

import (
	"fmt"
	"strings"

	"github.com/bulwarkmcp/bulwark/kernel"
	dnssrv "github.com/bulwarkmcp/bulwark/servers/dns"
	"github.com/bulwarkmcp/bulwark/servers/dns/localzone"
	"github.com/bulwarkmcp/bulwark/servers/dns/rfc2136"
	"github.com/bulwarkmcp/bulwark/servers/dns/tsig"
)

// registerRFC2136 adds the settings of -provider rfc2136 and the TSIG key
// file, which the local store's hidden primary reads too.
func (c *dnsFlags) registerRFC2136(f *flags) {
	f.String(&c.dnsServer, "dns-server", "BULWARK_DNS_SERVER", "", "rfc2136: the authoritative server to manage, `HOST:PORT` (port 53 when omitted)")
	f.List(&c.zones, "zones", "BULWARK_DNS_ZONES", "rfc2136: the zones to manage (the protocol cannot list them)")
	f.Secret(&c.tsigKey, "tsig-key-file", "BULWARK_DNS_TSIG_KEY", "TSIG keys (hmac-sha256 or hmac-sha512), as tsig-keygen, keymgr -t or dig -y write them: rfc2136 signs with one; the local store's secondaries must use theirs")
	f.String(&c.tsigName, "tsig-key", "BULWARK_DNS_TSIG_KEY_NAME", "", "rfc2136: the `NAME` of the key that signs, when the file holds several")
}

// providerUsage is -provider's help: the choices, and the tools each serves.
func providerUsage() string {
	all := dnssrv.ServedTools((*localzone.Provider)(nil))
	served := dnssrv.ServedTools((*rfc2136.Provider)(nil))
	return "hetzner, local or rfc2136 (default: hetzner when a Hetzner token is configured, rfc2136 when -dns-server is set, else local).\n" +
		fmt.Sprintf("hetzner and local serve all %d tools; rfc2136 serves %d: %s", len(all), len(served), strings.Join(served, " "))
}

// rfc2136Provider builds the provider from the flags. Every key of the
// file is declared to the kernel, so that no secret can leave in a result.
func (c *dnsFlags) rfc2136Provider(opts *kernel.Options) (*rfc2136.Provider, tsig.Key, error) {
	switch {
	case opts.BYOK:
		return nil, tsig.Key{}, fmt.Errorf("%w: -byok carries Hetzner tokens; -provider rfc2136 signs with its TSIG key", errUsage)
	case c.dnsServer == "":
		return nil, tsig.Key{}, fmt.Errorf("%w: -provider rfc2136 needs -dns-server HOST:PORT (BULWARK_DNS_SERVER)", errUsage)
	case len(c.zones) == 0:
		return nil, tsig.Key{}, fmt.Errorf("%w: -provider rfc2136 needs -zones (BULWARK_DNS_ZONES): the protocol cannot list them", errUsage)
	}
	ring, err := c.keyring()
	if err != nil {
		return nil, tsig.Key{}, err
	}
	if ring == nil {
		return nil, tsig.Key{}, fmt.Errorf("%w: -provider rfc2136 needs a TSIG key: -tsig-key-file FILE (tsig-keygen -a hmac-sha256 NAME > FILE), or BULWARK_DNS_TSIG_KEY", errUsage)
	}
	key, err := pickKey(ring, c.tsigName)
	if err != nil {
		return nil, tsig.Key{}, err
	}
	p, err := rfc2136.New(rfc2136.Options{Server: c.dnsServer, Zones: c.zones, Key: key})
	if err != nil {
		return nil, tsig.Key{}, fmt.Errorf("%w: %v", errUsage, err)
	}
	declareKeys(opts, ring)
	return p, key, nil
}

// keyring parses the TSIG key file; nil when none was given.
func (c *dnsFlags) keyring() (*tsig.Keyring, error) {
	if !c.tsigKey.set() {
		return nil, nil
	}
	ring, err := tsig.Parse(c.tsigKey.value)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", errUsage, c.tsigKey.source, err)
	}
	return ring, nil
}

// pickKey is the key named, or the file's only key.
func pickKey(ring *tsig.Keyring, name string) (tsig.Key, error) {
	if name != "" {
		k, ok := ring.Key(name)
		if !ok {
			return tsig.Key{}, fmt.Errorf("%w: -tsig-key %q is not in the key file", errUsage, name)
		}
		return k, nil
	}
	if ring.Len() != 1 {
		return tsig.Key{}, fmt.Errorf("%w: the key file holds %d keys: name the one that signs with -tsig-key", errUsage, ring.Len())
	}
	return ring.Keys()[0], nil
}

// declareKeys adds each key's secret to the kernel's credentials: it is
// then scrubbed from every result, error, notification and audit record.
func declareKeys(opts *kernel.Options, ring *tsig.Keyring) {
	for _, k := range ring.Keys() {
		opts.Credentials = append(opts.Credentials, kernel.Credential{Name: "tsig:" + k.Name(), Provider: "TSIG", Value: k.SecretBase64()})
	}
}
