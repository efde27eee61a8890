package hetznerapi

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
)

// handlerFunc answers one routed API call; it runs under Server.mu.
type handlerFunc func(s *Server, c *call) (int, any, *apiError)

// call is one routed request.
type call struct {
	w      http.ResponseWriter
	r      *http.Request
	params map[string]string // raw (still escaped) path segments
	q      url.Values
	body   []byte
	tooBig bool
	h      handlerFunc
}

type route struct {
	pattern []string
	methods map[string]handlerFunc
}

var routes = []route{
	{split("zones"), map[string]handlerFunc{"GET": listZones, "POST": createZone}},
	{split("zones/actions"), map[string]handlerFunc{"GET": listActions}},
	{split("zones/actions/{id}"), map[string]handlerFunc{"GET": getAction}},
	{split("actions"), map[string]handlerFunc{"GET": listRootActions}},
	{split("actions/{id}"), map[string]handlerFunc{"GET": getAction}},
	{split("zones/{z}"), map[string]handlerFunc{"GET": getZone, "PUT": updateZone, "DELETE": deleteZone}},
	{split("zones/{z}/zonefile"), map[string]handlerFunc{"GET": exportZonefile}},
	{split("zones/{z}/actions"), map[string]handlerFunc{"GET": listZoneActions}},
	{split("zones/{z}/actions/{a}"), map[string]handlerFunc{"GET": getZoneAction, "POST": zoneAction}},
	{split("zones/{z}/rrsets"), map[string]handlerFunc{"GET": listRRSets, "POST": createRRSet}},
	{split("zones/{z}/rrsets/{n}/{t}"), map[string]handlerFunc{"GET": getRRSet, "PUT": updateRRSet,
		"DELETE": deleteRRSet}},
	{split("zones/{z}/rrsets/{n}/{t}/actions/{a}"), map[string]handlerFunc{"POST": rrsetAction}},
}

func split(p string) []string { return strings.Split(p, "/") }

// newCall routes on the escaped path, so "%40" never matches "@"
// (reference §6 item 12).
func (s *Server) newCall(w http.ResponseWriter, r *http.Request, body []byte, tooBig bool) (*call, *apiError) {
	rest, ok := strings.CutPrefix(r.URL.EscapedPath(), BasePath+"/")
	if !ok {
		return nil, notFound("resource")
	}
	seg := strings.Split(rest, "/")
	for _, rt := range routes {
		params, ok := match(rt.pattern, seg)
		if !ok {
			continue
		}
		h, ok := rt.methods[r.Method]
		if !ok {
			w.Header().Set("Allow", strings.Join(sortedKeys(rt.methods), ", "))
			return nil, newError(CodeMethodNotAllowed, "method not allowed")
		}
		q, err := url.ParseQuery(r.URL.RawQuery)
		if err != nil {
			return nil, invalidField("query", "malformed query string")
		}
		return &call{w: w, r: r, params: params, q: q, body: body, tooBig: tooBig, h: h}, nil
	}
	return nil, notFound("resource")
}

func match(pattern, seg []string) (map[string]string, bool) {
	if len(pattern) != len(seg) {
		return nil, false
	}
	params := map[string]string{}
	for i, p := range pattern {
		if seg[i] == "" {
			return nil, false
		}
		if strings.HasPrefix(p, "{") {
			params[strings.Trim(p, "{}")] = seg[i]
		} else if p != seg[i] {
			return nil, false
		}
	}
	return params, true
}

// decode parses the JSON body into dst. An empty body counts as {}.
// Unknown fields are ignored (doc.go).
func (c *call) decode(dst any) *apiError {
	if c.tooBig {
		return newError(CodeJSONError, "request body too large")
	}
	if len(strings.TrimSpace(string(c.body))) == 0 {
		return nil
	}
	err := json.Unmarshal(c.body, dst)
	var te *json.UnmarshalTypeError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &te) && te.Field != "":
		return invalidField(te.Field, "must be of type "+te.Type.String())
	default:
		return newError(CodeJSONError, "request body is not valid JSON")
	}
}

// has reports whether the JSON body object has the top-level key name.
func (c *call) has(name string) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(c.body, &m) != nil {
		return false
	}
	_, ok := m[name]
	return ok
}
