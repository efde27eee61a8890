package hetzner

import (
	"context"
	"net/url"

	"github.com/bulwarkmcp/bulwark/servers/dns"
)

// ListActions lists DNS actions (GET /zones/actions), or one zone's
// (GET /zones/{z}/actions) when opts.Zone is set.
func (c *Client) ListActions(ctx context.Context, opts dns.ListActionsOptions) (dns.ActionList, error) {
	path := []string{"zones", "actions"}
	if opts.Zone != "" {
		if err := checkZone(opts.Zone); err != nil {
			return dns.ActionList{}, err
		}
		path = []string{"zones", opts.Zone, "actions"}
	}
	if err := checkPaging(opts.Page, opts.PerPage); err != nil {
		return dns.ActionList{}, err
	}
	q := url.Values{}
	addAll(q, "status", opts.Status)
	addAll(q, "sort", opts.Sort)
	setPaging(q, opts.Page, opts.PerPage)
	var env actionsEnvelope
	if err := c.do(ctx, call{op: "list_zone_actions", path: path, query: q, out: &env}); err != nil {
		return dns.ActionList{}, err
	}
	if env.Actions == nil {
		return dns.ActionList{}, malformed("list_zone_actions")
	}
	return dns.ActionList{Actions: *env.Actions, Pagination: env.Meta.Pagination}, nil
}

// GetAction returns one DNS action (GET /zones/actions/{id}).
func (c *Client) GetAction(ctx context.Context, id int64) (dns.Action, error) {
	if id <= 0 {
		return dns.Action{}, invalidInput("id", "must be a positive action id")
	}
	a, err := c.action(ctx, call{op: "get_zone_action", path: []string{"zones", "actions", itoa(id)}})
	if err != nil {
		return dns.Action{}, err
	}
	return *a, nil
}
