package vdbapi

import (
	"errors"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
)

// call is one routed API request.
type call struct {
	s   *Server
	r   *http.Request
	q   url.Values
	p   map[string]string // path parameters, unescaped
	org *org
}

type handlerFunc func(c *call) answer

type route struct {
	pattern []string
	h       handlerFunc
}

// routes is the v2 GET surface of reference §2, in match order: literal
// routes first, the root-level dynamic routes last ({eco} must be a known
// ecosystem).
var routes []route

func init() {
	for _, r := range []struct {
		p string
		h handlerFunc
	}{
		{"vuln/{id}", getVuln}, {"vuln/{id}/timeline", getTimeline}, {"vuln/{id}/affected", getAffected},
		{"vuln/{id}/scorecard", getScorecard}, {"vuln/{id}/fixes", getFixes},
		{"vuln/{id}/fixes/registry", getFixView}, {"vuln/{id}/fixes/distributions", getFixView},
		{"vuln/{id}/fixes/source", getFixView}, {"vuln/{id}/remediation-plan", getRemediationPlan},
		{"vuln/{id}/workarounds", getWorkarounds}, {"vuln/{id}/advisories", getAdvisories},
		{"vuln/{id}/cwe-guidance", getCWEGuidance}, {"vuln/{id}/kev", getVulnKEV},
		{"vuln/{id}/exploits", getVulnExploits}, {"vuln/{id}/iocs", getVulnIOCs},
		{"vuln/{id}/sightings", getSightings}, {"vuln/{id}/nuclei", getNuclei},
		{"vuln/{id}/snort-rules", getVulnRules}, {"vuln/{id}/yara-rules", getVulnRules},
		{"vuln/{id}/attack-techniques", getVulnTechniques}, {"vuln/{id}/tree-sitter", getTreeSitter},
		{"vuln/{id}/vex", getVulnVEX},
		{"scorecard/search", searchScorecards}, {"kev", listKEV}, {"vulnetix-kev", listVulnetixKEV},
		{"exploits", searchExploits}, {"exploits/{eid}", getExploit}, {"exploits/{eid}/poc", getPoC},
		{"exploit-sources", enumeration}, {"exploit-types", enumeration},
		{"iocs", searchIOCs}, {"snort-rules", searchRules}, {"yara-rules", searchRules},
		{"attack-techniques", searchTechniques}, {"vex", listVEX}, {"triage", triage},
		{"packages/search", searchPackages},
		{"product/{name}", getProduct}, {"product/{name}/{version}", getProduct},
		{"product/{name}/{version}/{ecosystem}", getProduct},
		{"eol/products/{p}", getEOLProduct}, {"eol/products/{p}/releases/{r}", getEOLRelease},
		{"eol/packages/{ecosystem}/{pkg}/versions/{v}", getEOLPackage},
		{"cloud-locators", cloudLocators}, {"gcve", gcveRange}, {"gcve/{year}/{month}", gcveMonth},
		{"identifiers", identifiers}, {"identifiers/{year}/{month}", identifiersMonth},
		{"ecosystems", enumeration}, {"sources", enumeration}, {"metric-types", enumeration},
		{"fix-distributions", enumeration}, {"summary", enumeration},
		{"vendor-trends", trends}, {"exploit-trends", trends}, {"msrc/patch-tuesdays", trends},
		{"msrc/patch-tuesday/{date}", patchTuesday}, {"ai-discoveries", trends},
		{"ai-assisted-exploits", trends}, {"ai-in-wild-exploitations", trends}, {"ai-generated-malware", trends},
		{"raw/sources", rawSources}, {"raw/{source}/{cve}", getRaw}, {"spec", spec},
		// root-level dynamic routes (reference §9: last, and constrained)
		{"{package}/vulns", packageVulns}, {"{eco}/{package}/versions", packageVersions},
		{"{package}/versions", packageVersions}, {"{eco}/{package}", getPackage},
		{"{eco}/{group}/{artifact}", getPackage},
	} {
		routes = append(routes, route{strings.Split(r.p, "/"), r.h})
	}
}

// errNoRoute and errBadEscape are the routing failures.
var (
	errNoRoute   = errors.New("no route")
	errBadEscape = errors.New("bad escape")
)

// matchRoute finds the handler for an escaped path under /v2 ("vuln/X").
// Path parameters are unescaped; a segment that does not unescape is an
// error, and so is an empty segment.
func matchRoute(rest string) (handlerFunc, map[string]string, error) {
	seg := strings.Split(rest, "/")
	for _, s := range seg {
		if s == "" {
			return nil, nil, errNoRoute
		}
	}
	for _, rt := range routes {
		p, ok := matchPattern(rt.pattern, seg)
		if ok {
			for k, v := range p {
				u, err := url.PathUnescape(v)
				if err != nil {
					return nil, nil, errBadEscape
				}
				p[k] = u
			}
			if eco, has := p["eco"]; has && !knownEcosystem(eco) {
				continue
			}
			return rt.h, p, nil
		}
	}
	return nil, nil, errNoRoute
}

func matchPattern(pattern, seg []string) (map[string]string, bool) {
	if len(pattern) != len(seg) {
		return nil, false
	}
	p := map[string]string{}
	for i, pat := range pattern {
		if strings.HasPrefix(pat, "{") {
			p[strings.Trim(pat, "{}")] = seg[i]
		} else if pat != seg[i] {
			return nil, false
		}
	}
	return p, true
}

// route runs the handler for an authenticated GET.
func (s *Server) route(r *http.Request, o *org) answer {
	rest, found := strings.CutPrefix(r.URL.EscapedPath(), APIVersion+"/")
	if !found {
		return apiErr(http.StatusNotFound, "Not found", "")
	}
	h, p, err := matchRoute(rest)
	switch {
	case errors.Is(err, errBadEscape):
		return badRequest("Malformed path")
	case err != nil:
		return apiErr(http.StatusNotFound, "Not found", "")
	case r.Method != http.MethodGet && r.Method != http.MethodHead:
		return apiErr(http.StatusMethodNotAllowed, "Method not allowed", "")
	}
	q, qerr := url.ParseQuery(r.URL.RawQuery)
	if qerr != nil {
		return badRequest("Malformed query string")
	}
	return h(&call{s: s, r: r, q: q, p: p, org: o})
}

// Page is a parsed limit/offset pair.
type Page struct{ Limit, Offset int }

// parsePage reads limit and offset (reference §2: paging is limit and
// offset). A missing limit is def; a limit outside 1..maxLimit, a negative
// offset, or anything that is not a plain decimal integer is an error
// (400). A repeated parameter is an error too.
func parsePage(q url.Values, def, maxLimit int) (Page, error) {
	p := Page{Limit: def}
	for _, k := range []string{"limit", "offset"} {
		vs := q[k]
		if len(vs) == 0 {
			continue
		}
		if len(vs) > 1 {
			return Page{}, errors.New(k + " must be given once")
		}
		n, err := decimal(vs[0])
		if err != nil {
			return Page{}, errors.New(k + " must be a non-negative integer")
		}
		if k == "limit" {
			if n < 1 || n > maxLimit {
				return Page{}, errors.New("limit must be between 1 and " + strconv.Itoa(maxLimit))
			}
			p.Limit = n
		} else {
			p.Offset = n
		}
	}
	return p, nil
}

// decimal parses 1 to 9 ASCII digits.
func decimal(s string) (int, error) {
	if s == "" || len(s) > 9 {
		return 0, strconv.ErrRange
	}
	n := 0
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return 0, strconv.ErrSyntax
		}
		n = n*10 + int(c-'0')
	}
	return n, nil
}

// list is the paged list shape (R): items plus total, limit, offset and
// hasMore.
func list[T any](all []T, p Page) answer {
	start := min(p.Offset, len(all))
	end := min(start+p.Limit, len(all))
	items := all[start:end]
	if items == nil {
		items = []T{}
	}
	return ok(map[string]any{"success": true, "items": items, "total": len(all), "limit": p.Limit,
		"offset": p.Offset, "hasMore": end < len(all)})
}

// paged parses the page (default 20, max 100) and answers the slice.
func paged[T any](c *call, all []T) answer {
	p, err := parsePage(c.q, 20, 100)
	if err != nil {
		return badRequest(err.Error())
	}
	return list(all, p)
}

func sortStrings(s []string) { sort.Strings(s) }

// multi returns a repeatable parameter's values (reference §2 "rep.").
func (c *call) multi(k string) []string { return c.q[k] }
