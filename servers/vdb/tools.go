package vdb

import (
	"context"
	"net/url"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/argschema"
)

// Argument bounds.
const (
	maxLimit     = 100
	defaultLimit = 25
	maxOffset    = 100_000
	maxArgLen    = 200
	idPattern    = `^[A-Za-z0-9][A-Za-z0-9._:+-]{0,127}$`
)

// out is every data tool's result type: a JSON object.
type out = map[string]any

// Page is the paging of list tools.
type Page struct {
	Limit  int    `json:"limit,omitempty" jsonschema:"items per page, 1-100 (default 25)"`
	Cursor string `json:"cursor,omitempty" jsonschema:"the nextCursor of the previous page; omit for the first"`
}

// offset reads the cursor: a decimal offset this server issued.
func (p Page) offset() (int, int, error) {
	limit := p.Limit
	if limit == 0 {
		limit = defaultLimit
	}
	if limit < 1 || limit > maxLimit {
		return 0, 0, kernel.Errorf(kernel.InvalidArgument, "limit must be 1 to %d.", maxLimit)
	}
	if p.Cursor == "" {
		return limit, 0, nil
	}
	off, err := strconv.Atoi(p.Cursor)
	if err != nil || off < 0 || off > maxOffset || strconv.Itoa(off) != p.Cursor {
		return 0, 0, kernel.Errorf(kernel.InvalidArgument, "The cursor is not one this server issued.").
			WithHint("Pass the nextCursor of the previous result unchanged, or omit it for the first page.")
	}
	return limit, off, nil
}

func (p Page) query(q url.Values) (url.Values, int, int, error) {
	limit, off, err := p.offset()
	if err != nil {
		return nil, 0, 0, err
	}
	q.Set("limit", strconv.Itoa(limit))
	q.Set("offset", strconv.Itoa(off))
	return q, limit, off, nil
}

// checkID refuses an identifier that is not CVE/GHSA/OSV/distro shaped.
func checkID(name, id string) error {
	if !validID(id) {
		return kernel.Errorf(kernel.InvalidArgument, "%s must look like a vulnerability identifier (CVE-2024-3094, GHSA-…, DSA-…), at most 128 characters.", name)
	}
	return nil
}

func validID(id string) bool {
	if id == "" || len(id) > 128 || strings.Contains(id, "..") {
		return false
	}
	for i, c := range []byte(id) {
		ok := c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9'
		if !ok && i > 0 {
			ok = strings.IndexByte("._:+-", c) >= 0
		}
		if !ok {
			return false
		}
	}
	return true
}

// set adds non-empty values to q.
func set(q url.Values, kv ...string) url.Values {
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] != "" {
			q.Set(kv[i], kv[i+1])
		}
	}
	return q
}

// readOnly is the policy of every data tool and of vdb_request.
var readOnly = kernel.Policy{ReadOnly: kernel.Yes, Destructive: kernel.No, Idempotent: kernel.Yes,
	OpenWorld: kernel.Yes, Confirm: kernel.Never, Tier: kernel.Open}

// commonRules bound the arguments every tool shares, where it has them.
var commonRules = map[string]argschema.Rule{
	"id":     argschema.All(argschema.Pattern(idPattern), argschema.MaxLen(128)),
	"limit":  argschema.Between(1, maxLimit),
	"cursor": argschema.All(argschema.Pattern(`^[0-9]{1,6}$`)),
}

// declare builds a read-only data tool of s, its handler under the call's
// deadline (bounded) and its schema bounded: every string at most
// maxArgLen, the shared rules, then the tool's own.
func declare[In any](s *Server, name, desc string, h handler[In], rules map[string]argschema.Rule) kernel.Tool {
	t := kernel.NewTool(kernel.Spec[In, out]{Name: name, Description: desc, Policy: readOnly, Handle: bounded(s, h)})
	sc := t.InputSchema()
	if sc == nil {
		return t
	}
	all := map[string]argschema.Rule{}
	for p, ps := range sc.Properties {
		if ps.Type == "string" {
			all[p] = argschema.MaxLen(maxArgLen)
		}
		if r, ok := commonRules[p]; ok {
			all[p] = argschema.All(orNoop(all[p]), r)
		}
	}
	for p, r := range rules {
		all[p] = argschema.All(orNoop(all[p]), r)
	}
	return argschema.Refine(t, all)
}

func orNoop(r argschema.Rule) argschema.Rule {
	if r == nil {
		return func(*jsonschema.Schema) {}
	}
	return r
}

// record fetches one JSON document and returns it compacted.
func (s *Server) record(ctx context.Context, call *kernel.Call, q url.Values, segs ...string) (out, error) {
	f, v, err := s.getJSON(ctx, call, segs, q)
	if err != nil {
		return nil, err
	}
	return result(f, out{"data": compact(v, 0)}), nil
}

// page fetches one page of a list and returns its items with a next cursor
// when the upstream may hold more.
func (s *Server) page(ctx context.Context, call *kernel.Call, pg Page, q url.Values, segs ...string) (out, error) {
	if q == nil {
		q = url.Values{}
	}
	q, limit, off, err := pg.query(q)
	if err != nil {
		return nil, err
	}
	f, v, err := s.getJSON(ctx, call, segs, q)
	if err != nil {
		return nil, err
	}
	list, meta := items(v)
	if list == nil {
		return result(f, out{"data": compact(v, 0)}), nil
	}
	kept := list[:min(len(list), limit)]
	res := out{"items": compact(kept, 1), "count": len(kept)}
	if len(meta) > 0 {
		res["meta"] = compact(meta, 1)
	}
	if total, ok := totalOf(meta); ok && total >= 0 {
		res["total"] = total
		if off+len(kept) < total {
			res["nextCursor"] = strconv.Itoa(off + limit)
		}
	} else if len(list) >= limit {
		res["nextCursor"] = strconv.Itoa(off + limit)
	}
	return result(f, res), nil
}

func totalOf(meta map[string]any) (int, bool) {
	for _, k := range []string{"total", "totalCount", "count"} {
		if n, ok := meta[k].(jsonNumber); ok {
			if i, err := n.Int64(); err == nil {
				return int(i), true
			}
		}
	}
	return 0, false
}
