package hetzner

import (
	"context"
	"net/http"
	"net/url"

	"github.com/bulwarkmcp/bulwark/servers/dns"
)

// ListRRSets lists one page of a primary zone's RRSets (GET /zones/{z}/rrsets).
func (c *Client) ListRRSets(ctx context.Context, zone string, opts dns.ListRRSetsOptions) (dns.RRSetList, error) {
	if err := checkZone(zone); err != nil {
		return dns.RRSetList{}, err
	}
	if err := checkPaging(opts.Page, opts.PerPage); err != nil {
		return dns.RRSetList{}, err
	}
	for _, t := range opts.Types {
		if err := checkType("type", t); err != nil {
			return dns.RRSetList{}, err
		}
	}
	q := url.Values{}
	setNonEmpty(q, "name", opts.Name)
	addAll(q, "type", opts.Types)
	setNonEmpty(q, "label_selector", opts.LabelSelector)
	addAll(q, "sort", opts.Sort)
	setPaging(q, opts.Page, opts.PerPage)
	var env rrsetsEnvelope
	if err := c.do(ctx, call{op: "list_zone_rrsets", path: []string{"zones", zone, "rrsets"}, query: q, out: &env}); err != nil {
		return dns.RRSetList{}, err
	}
	if env.RRSets == nil {
		return dns.RRSetList{}, malformed("list_zone_rrsets")
	}
	return dns.RRSetList{RRSets: *env.RRSets, Pagination: env.Meta.Pagination}, nil
}

// GetRRSet returns one RRSet (GET /zones/{z}/rrsets/{n}/{t}).
func (c *Client) GetRRSet(ctx context.Context, zone, name, typ string) (dns.RRSet, error) {
	if err := checkRRSet(zone, name, typ); err != nil {
		return dns.RRSet{}, err
	}
	var env rrsetEnvelope
	if err := c.do(ctx, call{op: "get_zone_rrset", path: rrsetPath(zone, name, typ), out: &env}); err != nil {
		return dns.RRSet{}, err
	}
	if env.RRSet == nil {
		return dns.RRSet{}, malformed("get_zone_rrset")
	}
	return *env.RRSet, nil
}

// CreateRRSet creates an RRSet (POST /zones/{z}/rrsets); it fails when the
// (name, type) pair exists. The action may be nil if the API sends none.
func (c *Client) CreateRRSet(ctx context.Context, zone string, req dns.CreateRRSetRequest) (dns.RRSet, *dns.Action, error) {
	if err := checkRRSet(zone, req.Name, req.Type); err != nil {
		return dns.RRSet{}, nil, err
	}
	body := createRRSetBody{Name: req.Name, Type: req.Type, TTL: req.TTL, Records: records(req.Records)}
	if req.Labels != nil {
		body.Labels = labels(req.Labels)
	}
	var env rrsetEnvelope
	k := call{op: "create_zone_rrset", method: http.MethodPost, path: []string{"zones", zone, "rrsets"}, body: body, out: &env}
	if err := c.do(ctx, k); err != nil {
		return dns.RRSet{}, nil, err
	}
	if env.RRSet == nil {
		return dns.RRSet{}, nil, malformed("create_zone_rrset")
	}
	return *env.RRSet, env.Action, nil
}

// UpdateRRSet replaces an RRSet's labels (PUT /zones/{z}/rrsets/{n}/{t}); nil clears them.
func (c *Client) UpdateRRSet(ctx context.Context, zone, name, typ string, lbls map[string]string) (dns.RRSet, error) {
	if err := checkRRSet(zone, name, typ); err != nil {
		return dns.RRSet{}, err
	}
	var env rrsetEnvelope
	k := call{op: "update_zone_rrset", method: http.MethodPut, path: rrsetPath(zone, name, typ), body: labelsBody{Labels: labels(lbls)}, out: &env}
	if err := c.do(ctx, k); err != nil {
		return dns.RRSet{}, err
	}
	if env.RRSet == nil {
		return dns.RRSet{}, malformed("update_zone_rrset")
	}
	return *env.RRSet, nil
}

// DeleteRRSet deletes an RRSet (DELETE /zones/{z}/rrsets/{n}/{t}).
func (c *Client) DeleteRRSet(ctx context.Context, zone, name, typ string) (*dns.Action, error) {
	if err := checkRRSet(zone, name, typ); err != nil {
		return nil, err
	}
	return c.action(ctx, call{op: "delete_zone_rrset", method: http.MethodDelete, path: rrsetPath(zone, name, typ)})
}

// SetRecords replaces all records of an existing RRSet (…/actions/set_records).
func (c *Client) SetRecords(ctx context.Context, zone, name, typ string, rs []dns.Record) (*dns.Action, error) {
	return c.rrsetAction(ctx, "set_zone_rrset_records", zone, name, typ, "set_records", recordsBody{Records: records(rs)})
}

// AddRecords appends records, creating the RRSet when missing (…/actions/add_records).
func (c *Client) AddRecords(ctx context.Context, zone, name, typ string, rs []dns.Record, ttl *int) (*dns.Action, error) {
	return c.rrsetAction(ctx, "add_zone_rrset_records", zone, name, typ, "add_records", addRecordsBody{Records: records(rs), TTL: ttl})
}

// RemoveRecords removes records by value; an emptied RRSet is deleted (…/actions/remove_records).
func (c *Client) RemoveRecords(ctx context.Context, zone, name, typ string, rs []dns.Record) (*dns.Action, error) {
	return c.rrsetAction(ctx, "remove_zone_rrset_records", zone, name, typ, "remove_records", recordsBody{Records: records(rs)})
}

// UpdateRecords changes only the comments of existing records; every
// record's comment is sent, so "" clears it (…/actions/update_records).
func (c *Client) UpdateRecords(ctx context.Context, zone, name, typ string, rs []dns.Record) (*dns.Action, error) {
	return c.rrsetAction(ctx, "update_zone_rrset_records", zone, name, typ, "update_records", updateRecordsBody{Records: recordsWithComments(rs)})
}

// ChangeRRSetTTL sets an RRSet's TTL; nil returns it to the zone default (…/actions/change_ttl).
func (c *Client) ChangeRRSetTTL(ctx context.Context, zone, name, typ string, ttl *int) (*dns.Action, error) {
	return c.rrsetAction(ctx, "change_zone_rrset_ttl", zone, name, typ, "change_ttl", rrsetTTLBody{TTL: ttl})
}

// ChangeRRSetProtection sets an RRSet's change protection (…/actions/change_protection).
func (c *Client) ChangeRRSetProtection(ctx context.Context, zone, name, typ string, change bool) (*dns.Action, error) {
	return c.rrsetAction(ctx, "change_zone_rrset_protection", zone, name, typ, "change_protection", rrsetProtectionBody{Change: change})
}

func (c *Client) rrsetAction(ctx context.Context, op, zone, name, typ, action string, body any) (*dns.Action, error) {
	if err := checkRRSet(zone, name, typ); err != nil {
		return nil, err
	}
	k := call{op: op, method: http.MethodPost, path: rrsetPath(zone, name, typ, "actions", action), body: body}
	return c.action(ctx, k)
}
