package hetzner

import "github.com/bulwarkmcp/bulwark/servers/dns"

// Request bodies. Each is built field by field from typed arguments, so a
// field the API must not see cannot be smuggled in (reference: "only
// declared fields are sent").

type recordWire struct {
	Value   string `json:"value"`
	Comment string `json:"comment,omitempty"`
}

// recordCommentWire always sends comment: update_records sets comments, and
// an empty one clears it.
type recordCommentWire struct {
	Value   string `json:"value"`
	Comment string `json:"comment"`
}

type nameserverWire struct {
	Address       string `json:"address"`
	Port          int    `json:"port,omitempty"`
	TSIGKey       string `json:"tsig_key,omitempty"`
	TSIGAlgorithm string `json:"tsig_algorithm,omitempty"`
}

type createZoneBody struct {
	Name               string            `json:"name"`
	Mode               string            `json:"mode"`
	TTL                *int              `json:"ttl,omitempty"`
	Labels             map[string]string `json:"labels,omitempty"`
	PrimaryNameservers []nameserverWire  `json:"primary_nameservers,omitempty"`
	Zonefile           string            `json:"zonefile,omitempty"`
}

type labelsBody struct {
	Labels map[string]string `json:"labels"`
}

type zoneTTLBody struct {
	TTL int `json:"ttl"`
}

type zoneProtectionBody struct {
	Delete bool `json:"delete"`
}

type primaryNameserversBody struct {
	PrimaryNameservers []nameserverWire `json:"primary_nameservers"`
}

type zonefileBody struct {
	Zonefile string `json:"zonefile"`
}

type createRRSetBody struct {
	Name    string            `json:"name"`
	Type    string            `json:"type"`
	TTL     *int              `json:"ttl,omitempty"`
	Labels  map[string]string `json:"labels,omitempty"`
	Records []recordWire      `json:"records"`
}

type recordsBody struct {
	Records []recordWire `json:"records"`
}

type addRecordsBody struct {
	Records []recordWire `json:"records"`
	TTL     *int         `json:"ttl,omitempty"`
}

type updateRecordsBody struct {
	Records []recordCommentWire `json:"records"`
}

// rrsetTTLBody always sends ttl: null returns the RRSet to the zone default.
type rrsetTTLBody struct {
	TTL *int `json:"ttl"`
}

type rrsetProtectionBody struct {
	Change bool `json:"change"`
}

func records(rs []dns.Record) []recordWire {
	out := make([]recordWire, 0, len(rs))
	for _, r := range rs {
		out = append(out, recordWire{Value: r.Value, Comment: r.Comment})
	}
	return out
}

func recordsWithComments(rs []dns.Record) []recordCommentWire {
	out := make([]recordCommentWire, 0, len(rs))
	for _, r := range rs {
		out = append(out, recordCommentWire{Value: r.Value, Comment: r.Comment})
	}
	return out
}

func nameservers(ns []dns.PrimaryNameserver) []nameserverWire {
	if ns == nil {
		return nil
	}
	out := make([]nameserverWire, 0, len(ns))
	for _, n := range ns {
		out = append(out, nameserverWire{Address: n.Address, Port: n.Port, TSIGKey: n.TSIGKey, TSIGAlgorithm: n.TSIGAlgorithm})
	}
	return out
}

// labels copies a label map; nil becomes {} because a label PUT replaces
// the whole map and null is not a map.
func labels(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// Response envelopes. Pointers tell a missing key from an empty value.

type zoneEnvelope struct {
	Zone   *dns.Zone   `json:"zone"`
	Action *dns.Action `json:"action"`
}

type rrsetEnvelope struct {
	RRSet  *dns.RRSet  `json:"rrset"`
	Action *dns.Action `json:"action"`
}

type actionEnvelope struct {
	Action *dns.Action `json:"action"`
}

type zonefileEnvelope struct {
	Zonefile *string `json:"zonefile"`
}

type metaWire struct {
	Pagination dns.Pagination `json:"pagination"`
}

type zonesEnvelope struct {
	Zones *[]dns.Zone `json:"zones"`
	Meta  metaWire    `json:"meta"`
}

type rrsetsEnvelope struct {
	RRSets *[]dns.RRSet `json:"rrsets"`
	Meta   metaWire     `json:"meta"`
}

type actionsEnvelope struct {
	Actions *[]dns.Action `json:"actions"`
	Meta    metaWire      `json:"meta"`
}
