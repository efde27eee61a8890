package hetzner

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/bulwarkmcp/bulwark/servers/dns"
	"github.com/bulwarkmcp/bulwark/servers/dns/zonefile"
)

// ListZones lists one page of zones (GET /zones).
func (c *Client) ListZones(ctx context.Context, opts dns.ListZonesOptions) (dns.ZoneList, error) {
	if err := checkPaging(opts.Page, opts.PerPage); err != nil {
		return dns.ZoneList{}, err
	}
	q := url.Values{}
	setNonEmpty(q, "name", opts.Name)
	setNonEmpty(q, "mode", opts.Mode)
	setNonEmpty(q, "label_selector", opts.LabelSelector)
	addAll(q, "sort", opts.Sort)
	setPaging(q, opts.Page, opts.PerPage)
	var env zonesEnvelope
	if err := c.do(ctx, call{op: "list_zones", path: []string{"zones"}, query: q, out: &env}); err != nil {
		return dns.ZoneList{}, err
	}
	if env.Zones == nil {
		return dns.ZoneList{}, malformed("list_zones")
	}
	return dns.ZoneList{Zones: *env.Zones, Pagination: env.Meta.Pagination}, nil
}

// GetZone returns a zone by id or name (GET /zones/{z}).
func (c *Client) GetZone(ctx context.Context, zone string) (dns.Zone, error) {
	if err := checkZone(zone); err != nil {
		return dns.Zone{}, err
	}
	var env zoneEnvelope
	if err := c.do(ctx, call{op: "get_zone", path: []string{"zones", zone}, out: &env}); err != nil {
		return dns.Zone{}, err
	}
	if env.Zone == nil {
		return dns.Zone{}, malformed("get_zone")
	}
	return *env.Zone, nil
}

// CreateZone creates a zone (POST /zones). The action may be nil if the API
// sends none.
func (c *Client) CreateZone(ctx context.Context, req dns.CreateZoneRequest) (dns.Zone, *dns.Action, error) {
	body := createZoneBody{
		Name:               req.Name,
		Mode:               req.Mode,
		TTL:                req.TTL,
		PrimaryNameservers: nameservers(req.PrimaryNameservers),
		Zonefile:           req.Zonefile,
	}
	if req.Labels != nil {
		body.Labels = labels(req.Labels)
	}
	var env zoneEnvelope
	k := call{op: "create_zone", method: http.MethodPost, path: []string{"zones"}, body: body, out: &env}
	if err := c.do(ctx, k); err != nil {
		return dns.Zone{}, nil, err
	}
	if env.Zone == nil {
		return dns.Zone{}, nil, malformed("create_zone")
	}
	return *env.Zone, env.Action, nil
}

// UpdateZone replaces a zone's labels (PUT /zones/{z}); nil clears them.
func (c *Client) UpdateZone(ctx context.Context, zone string, lbls map[string]string) (dns.Zone, error) {
	if err := checkZone(zone); err != nil {
		return dns.Zone{}, err
	}
	var env zoneEnvelope
	k := call{op: "update_zone", method: http.MethodPut, path: []string{"zones", zone}, body: labelsBody{Labels: labels(lbls)}, out: &env}
	if err := c.do(ctx, k); err != nil {
		return dns.Zone{}, err
	}
	if env.Zone == nil {
		return dns.Zone{}, malformed("update_zone")
	}
	return *env.Zone, nil
}

// DeleteZone deletes a zone (DELETE /zones/{z}).
func (c *Client) DeleteZone(ctx context.Context, zone string) (*dns.Action, error) {
	if err := checkZone(zone); err != nil {
		return nil, err
	}
	return c.action(ctx, call{op: "delete_zone", method: http.MethodDelete, path: []string{"zones", zone}})
}

// ExportZonefile returns a primary zone as a BIND zone file (GET /zones/{z}/zonefile).
func (c *Client) ExportZonefile(ctx context.Context, zone string) (string, error) {
	if err := checkZone(zone); err != nil {
		return "", err
	}
	var env zonefileEnvelope
	if err := c.do(ctx, call{op: "get_zone_zonefile", path: []string{"zones", zone, "zonefile"}, out: &env}); err != nil {
		return "", err
	}
	if env.Zonefile == nil {
		return "", malformed("get_zone_zonefile")
	}
	return *env.Zonefile, nil
}

// ImportZonefile replaces all RRSets of a primary zone (POST …/actions/import_zonefile).
func (c *Client) ImportZonefile(ctx context.Context, zone, zonefile string) (*dns.Action, error) {
	return c.zoneAction(ctx, "import_zone_zonefile", zone, "import_zonefile", zonefileBody{Zonefile: zonefile})
}

// CheckImport checks an import before a confirmation token is issued: the
// API has no dry run, so the file is read here by the documented rules
// (reference §5) under the zonefile package's budget. A file refused here
// would be refused by the API; one accepted here may still be (the API's
// parser is its own, and a change-protected RRSet is found only then).
func (c *Client) CheckImport(ctx context.Context, z dns.Zone, text string) error {
	if z.Mode == dns.ModeSecondary {
		return &dns.Error{Status: http.StatusUnprocessableEntity, Code: "incorrect_zone_mode",
			Message: "import_zonefile is not available for secondary zones"}
	}
	var assigned []string
	if z.AuthoritativeNameservers != nil {
		assigned = z.AuthoritativeNameservers.Assigned
	}
	release, err := zonefile.Acquire(ctx)
	if err != nil {
		return err
	}
	err = zonefile.Check(ctx, text, z.Name, assigned)
	release()
	var ze *zonefile.Error
	if errors.As(err, &ze) {
		return invalidInput("zonefile", ze.Msg)
	}
	if err != nil {
		return err
	}
	return c.checkUnprotected(ctx, strconv.FormatInt(z.ID, 10))
}

// maxProtectionPages bounds how many pages of RRSets CheckImport reads to
// find a change-protected one (the API then refuses the import); past it,
// the API is left to say so.
const maxProtectionPages = 100

// checkUnprotected refuses an import into a zone with a change-protected
// RRSet, as the API would.
func (c *Client) checkUnprotected(ctx context.Context, zone string) error {
	for page := 1; page <= maxProtectionPages; page++ {
		list, err := c.ListRRSets(ctx, zone, dns.ListRRSetsOptions{Page: page, PerPage: 100})
		if err != nil {
			return err
		}
		for _, rs := range list.RRSets {
			if rs.Protection.Change {
				return &dns.Error{Status: http.StatusLocked, Code: "protected",
					Message: "an rrset is change-protected; an import replaces every rrset"}
			}
		}
		if list.Pagination.NextPage == nil {
			return nil
		}
	}
	return nil
}

// ChangeZoneTTL sets a primary zone's default TTL (POST …/actions/change_ttl).
func (c *Client) ChangeZoneTTL(ctx context.Context, zone string, ttl int) (*dns.Action, error) {
	return c.zoneAction(ctx, "change_zone_ttl", zone, "change_ttl", zoneTTLBody{TTL: ttl})
}

// ChangeZoneProtection sets a zone's delete protection (POST …/actions/change_protection).
func (c *Client) ChangeZoneProtection(ctx context.Context, zone string, del bool) (*dns.Action, error) {
	return c.zoneAction(ctx, "change_zone_protection", zone, "change_protection", zoneProtectionBody{Delete: del})
}

// ChangePrimaryNameservers replaces a secondary zone's AXFR sources
// (POST …/actions/change_primary_nameservers).
func (c *Client) ChangePrimaryNameservers(ctx context.Context, zone string, servers []dns.PrimaryNameserver) (*dns.Action, error) {
	body := primaryNameserversBody{PrimaryNameservers: nameservers(servers)}
	if body.PrimaryNameservers == nil {
		body.PrimaryNameservers = []nameserverWire{}
	}
	return c.zoneAction(ctx, "change_zone_primary_nameservers", zone, "change_primary_nameservers", body)
}

func (c *Client) zoneAction(ctx context.Context, op, zone, name string, body any) (*dns.Action, error) {
	if err := checkZone(zone); err != nil {
		return nil, err
	}
	return c.action(ctx, call{op: op, method: http.MethodPost, path: []string{"zones", zone, "actions", name}, body: body})
}

// action runs a call whose answer is {"action": …}, which must be present.
func (c *Client) action(ctx context.Context, k call) (*dns.Action, error) {
	var env actionEnvelope
	k.out = &env
	if err := c.do(ctx, k); err != nil {
		return nil, err
	}
	if env.Action == nil {
		return nil, malformed(k.op)
	}
	return env.Action, nil
}

func malformed(op string) error {
	return fmt.Errorf("hetzner: %s: %w: a documented key is missing", op, ErrMalformedResponse)
}

func setNonEmpty(q url.Values, key, v string) {
	if v != "" {
		q.Set(key, v)
	}
}

// addAll sends an array parameter as repeated keys (reference §2.5).
func addAll(q url.Values, key string, vs []string) {
	for _, v := range vs {
		q.Add(key, v)
	}
}

func setPaging(q url.Values, page, perPage int) {
	if page > 0 {
		q.Set("page", strconv.Itoa(page))
	}
	if perPage > 0 {
		q.Set("per_page", strconv.Itoa(perPage))
	}
}
