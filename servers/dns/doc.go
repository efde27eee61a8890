// Package dns is the MCP server `bulwark dns`: tools for DNS zones and
// records over one Provider interface, implemented by the Hetzner Cloud DNS
// API client (servers/dns/hetzner), a local zone-file store
// (servers/dns/localzone) and any authoritative server that takes RFC 2136
// updates (servers/dns/rfc2136). This package never imports them;
// internal/cli picks one and hands it to New.
//
// Provider is the core every backend serves (zones and RRSets read, record
// changes). The rest is in capability interfaces (capabilities.go): a tool
// is registered only when the provider implements the interface it needs,
// so a backend whose protocol has no labels, comments, protection, actions
// or zone creation offers no tool that would pretend to them, and
// ServedTools says which tools a kind of provider serves.
//
// The tools are the surface of the established Hetzner DNS MCP server
// (reference §8.2) plus update_records and sort parameters on the lists:
//
//	zones    list_zones get_zone export_zonefile create_zone update_zone
//	         delete_zone import_zonefile change_zone_ttl
//	         change_zone_protection change_primary_nameservers
//	rrsets   list_rrsets get_rrset create_rrset update_rrset delete_rrset
//	         set_records add_records remove_records update_records
//	         change_rrset_ttl change_rrset_protection
//	actions  list_zone_actions get_zone_action
//
// Safety, tool by tool, is in policies.go; the confirmation gates follow the
// security page's table. A gated tool's token is bound to the zone's id
// (resolved through the provider, so "4711" and "example.com" are one key),
// the RRSet's name and type, and for the list-taking tools to the exact
// payload. The refusal that carries a token reports counts and TTLs only,
// never values read from the provider.
//
// Tools that start a provider action follow it (Config.ActionWait,
// Config.ActionPoll) and report progress while it runs; an action still
// running at the deadline is returned with a note, one that fails is a tool
// error. Zone access can be narrowed with Config.AllowZones (allow.go).
package dns
