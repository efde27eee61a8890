// Command bare is the baseline of the stdio cold-start benchmark
// (go run ./bench/coldstart): a bare go-sdk server with as many tools as
// `bulwark dns` registers (23), declared the idiomatic go-sdk way — typed
// handlers through the generic mcp.AddTool, whose input schemas the SDK
// infers from the argument types by reflection and resolves for validation
// — served over stdio. The argument types are shaped like the DNS tools'
// (zone, name, type, records with values and comments, TTL, labels,
// paging), with jsonschema descriptions. With -one it registers only the
// first tool: the least a go-sdk server with a tool costs, a stricter
// yardstick.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type zoneArgs struct {
	Zone string `json:"zone" jsonschema:"the zone's name, e.g. example.com"`
}

type listArgs struct {
	Name     string            `json:"name,omitempty" jsonschema:"only zones whose name contains this"`
	Mode     string            `json:"mode,omitempty" jsonschema:"primary or secondary"`
	Labels   map[string]string `json:"label_selector,omitempty" jsonschema:"labels to match"`
	Sort     []string          `json:"sort,omitempty" jsonschema:"sort fields, e.g. name:asc"`
	Page     int               `json:"page,omitempty" jsonschema:"the page, from 1"`
	PerPage  int               `json:"per_page,omitempty" jsonschema:"entries per page"`
	Statuses []string          `json:"status,omitempty" jsonschema:"only these statuses"`
}

type record struct {
	Value   string `json:"value" jsonschema:"the record's value in zone-file syntax"`
	Comment string `json:"comment,omitempty" jsonschema:"an optional comment"`
}

type rrsetArgs struct {
	Zone    string            `json:"zone" jsonschema:"the zone's name"`
	Name    string            `json:"name" jsonschema:"the RRSet's name relative to the zone"`
	Type    string            `json:"type" jsonschema:"the record type, e.g. A"`
	TTL     *int              `json:"ttl,omitempty" jsonschema:"TTL in seconds"`
	Records []record          `json:"records,omitempty" jsonschema:"the records"`
	Labels  map[string]string `json:"labels,omitempty" jsonschema:"labels"`
	Protect *bool             `json:"protect,omitempty" jsonschema:"protection against deletion"`
}

type zoneChangeArgs struct {
	Zone        string            `json:"zone" jsonschema:"the zone's name"`
	TTL         *int              `json:"ttl,omitempty" jsonschema:"the default TTL"`
	Labels      map[string]string `json:"labels,omitempty" jsonschema:"labels"`
	Nameservers []struct {
		Address string `json:"address" jsonschema:"an IP address"`
		Port    int    `json:"port,omitempty" jsonschema:"the port"`
		TSIGKey string `json:"tsig_key,omitempty" jsonschema:"a TSIG key"`
	} `json:"primary_nameservers,omitempty" jsonschema:"the primaries"`
	Zonefile string `json:"zonefile,omitempty" jsonschema:"a zone file"`
}

type actionArgs struct {
	Zone     string `json:"zone,omitempty" jsonschema:"the zone's name"`
	ActionID int64  `json:"action_id,omitempty" jsonschema:"the action's id"`
}

func add[In any](s *mcp.Server, name string) {
	mcp.AddTool(s, &mcp.Tool{Name: name, Description: "The " + name + " tool."},
		func(context.Context, *mcp.CallToolRequest, In) (*mcp.CallToolResult, map[string]any, error) {
			return nil, map[string]any{"ok": true}, nil
		})
}

func main() {
	one := flag.Bool("one", false, "register only list_zones: the least a go-sdk server with a tool costs")
	flag.Parse()
	s := mcp.NewServer(&mcp.Implementation{Name: "bench-bare", Version: "v0"}, &mcp.ServerOptions{Instructions: "Manages DNS zones."})
	add[listArgs](s, "list_zones")
	if !*one {
		more(s)
	}
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "bare:", err)
		os.Exit(1)
	}
}

// more registers the other 22 tools.
func more(s *mcp.Server) {
	for _, n := range []string{"get_zone", "delete_zone", "export_zonefile", "list_zone_actions"} {
		add[zoneArgs](s, n)
	}
	for _, n := range []string{"create_zone", "update_zone", "change_zone_ttl", "change_zone_protection", "change_primary_nameservers", "import_zonefile"} {
		add[zoneChangeArgs](s, n)
	}
	for _, n := range []string{"list_rrsets", "get_rrset", "create_rrset", "update_rrset", "delete_rrset", "change_rrset_ttl",
		"change_rrset_protection", "set_records", "add_records", "remove_records", "update_records"} {
		add[rrsetArgs](s, n)
	}
	add[actionArgs](s, "get_zone_action")
}
