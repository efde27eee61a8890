package vdbapi

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// withVuln loads {id} or answers 404 in the v2 error shape.
func withVuln(f func(c *call, v *Vuln) answer) handlerFunc {
	return func(c *call) answer {
		v, _, found := c.s.vuln(c.p["id"])
		if !found {
			return apiErr(http.StatusNotFound, "Vulnerability not found", "No record for "+c.p["id"])
		}
		return f(c, v)
	}
}

// record renders the merged record (R: the reference gives no schema).
func record(v *Vuln) map[string]any {
	return map[string]any{
		"id": v.ID, "aliases": nonNil(v.Aliases), "title": v.Title,
		"descriptions": []map[string]any{{"lang": "en", "value": v.Description}},
		"published":    v.Published.Format(time.RFC3339), "modified": v.Modified.Format(time.RFC3339),
		"severity": v.Severity,
		"metrics": []map[string]any{
			{"type": "cvssV3_1", "score": v.CVSS, "vector": v.Vector, "source": "nvd"},
			{"type": "epss", "score": v.EPSS, "percentile": v.EPSSPercentile, "source": "first"},
		},
		"cwes":   nonNil(v.CWEs),
		"kev":    map[string]any{"inKev": v.KEV, "dueDate": v.KEVDueDate},
		"vendor": v.Vendor, "product": v.Product,
		"affected":   nonNil(v.Affected),
		"references": references(v),
		"sources":    []string{"nvd", "osv", "ghsa", "cisa-kev"},
	}
}

func references(v *Vuln) []map[string]any {
	refs := []map[string]any{{"url": "https://nvd.nist.gov/vuln/detail/" + v.ID, "type": "advisory"}}
	for _, e := range v.Exploits {
		refs = append(refs, map[string]any{"url": e.URL, "type": "exploit"})
	}
	return refs
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func getVuln(c *call) answer {
	v, big, found := c.s.vuln(c.p["id"])
	if !found {
		return apiErr(http.StatusNotFound, "Vulnerability not found", "No record for "+c.p["id"])
	}
	a := ok(record(v))
	a.modified = v.Modified
	if big > 0 {
		rec := record(v)
		a.stream = func(w http.ResponseWriter, r *http.Request) { streamBig(w, r, rec, big) }
	}
	return a
}

// streamBig writes a record of exactly size bytes (when size allows): the
// record without its closing brace, then "padding" affected ranges.
func streamBig(w http.ResponseWriter, r *http.Request, rec map[string]any, size int) {
	delete(rec, "affected")
	head := mustJSON(rec)
	head = head[:len(head)-2] // drop "}\n"
	const open, item, closing = `,"affected":[`, `{"ecosystem":"npm","packageName":"padding-generated","introduced":"0.0.0","fixed":"1.0.0"},`, `{"ecosystem":"npm","packageName":"last","introduced":"0"}]}`
	pad := int64(size - len(head) - len(open) - len(closing))
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(head)+len(open)+len(closing)+int(max(pad, 0))))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(head)
	_, _ = w.Write([]byte(open))
	if writePadding(r.Context(), w, pad, item) {
		_, _ = w.Write([]byte(closing))
	}
}

var getTimeline = withVuln(func(c *call, v *Vuln) answer {
	events := []map[string]any{
		{"date": v.Published.Format(time.DateOnly), "type": "published", "source": "nvd"},
		{"date": v.Modified.Format(time.DateOnly), "type": "modified", "source": "nvd"},
		{"date": v.Published.Format(time.DateOnly), "type": "score", "source": "first", "score": v.EPSS},
	}
	if v.KEV {
		events = append(events, map[string]any{"date": v.Published.AddDate(0, 0, 1).Format(time.DateOnly),
			"type": "kev-added", "source": "cisa"})
	}
	for _, e := range v.Exploits {
		events = append(events, map[string]any{"date": v.Published.AddDate(0, 0, 2).Format(time.DateOnly),
			"type": "exploit-published", "source": e.Source, "description": e.Description})
	}
	include, exclude := c.q.Get("include"), c.q.Get("exclude")
	var out []map[string]any
	for _, e := range events {
		t := e["type"].(string)
		if (include == "" || inList(include, t)) && !inList(exclude, t) {
			out = append(out, e)
		}
	}
	return ok(map[string]any{"success": true, "id": v.ID, "events": nonNil(out)})
})

func inList(csv, v string) bool {
	for _, x := range strings.Split(csv, ",") {
		if strings.TrimSpace(x) == v {
			return true
		}
	}
	return false
}

// filterAffected applies the package filters of reference §2.
func filterAffected(c *call, all []Affected) []Affected {
	var out []Affected
	for _, a := range all {
		if e := c.q.Get("ecosystem"); e != "" && !strings.EqualFold(e, a.Ecosystem) {
			continue
		}
		if n := c.q.Get("packageName"); n != "" && n != a.Package {
			continue
		}
		if p := c.q.Get("purl"); p != "" && p != a.PURL {
			continue
		}
		out = append(out, a)
	}
	return out
}

var getAffected = withVuln(func(c *call, v *Vuln) answer { return paged(c, filterAffected(c, v.Affected)) })

var getScorecard = withVuln(func(c *call, v *Vuln) answer {
	return ok(map[string]any{"success": true, "id": v.ID, "repo": "github.com/" + v.Vendor + "/" + v.Product,
		"score": 6.4, "checks": []map[string]any{{"name": "Maintained", "score": 10}, {"name": "Pinned-Dependencies", "score": 3}}})
})

func fixViews(v *Vuln) map[string][]map[string]any {
	views := map[string][]map[string]any{"registry": {}, "distributions": {}, "source": {}}
	for _, a := range v.Affected {
		if a.Fixed == "" {
			continue
		}
		if a.Ecosystem == "deb" || a.Ecosystem == "rpm" {
			views["distributions"] = append(views["distributions"], map[string]any{"distro": map[string]string{"deb": "debian", "rpm": "fedora"}[a.Ecosystem],
				"package": a.Package, "fixedVersion": a.Fixed})
		} else {
			views["registry"] = append(views["registry"], map[string]any{"ecosystem": a.Ecosystem,
				"packageName": a.Package, "fixedVersion": a.Fixed})
		}
		views["source"] = append(views["source"], map[string]any{"repo": "https://github.com/" + v.Vendor + "/" + v.Product,
			"commit": "0123456789abcdef0123456789abcdef01234567", "fixedVersion": a.Fixed})
	}
	return views
}

var getFixes = withVuln(func(c *call, v *Vuln) answer {
	views := fixViews(v)
	return ok(map[string]any{"success": true, "id": v.ID, "registry": views["registry"],
		"distributions": views["distributions"], "source": views["source"]})
})

var getFixView = withVuln(func(c *call, v *Vuln) answer {
	view := c.r.URL.EscapedPath()[strings.LastIndex(c.r.URL.EscapedPath(), "/")+1:]
	return paged(c, fixViews(v)[view])
})

var getRemediationPlan = withVuln(func(c *call, v *Vuln) answer {
	target := ""
	for _, a := range filterAffected(c, v.Affected) {
		if a.Fixed != "" && target == "" {
			target = a.Fixed
		}
	}
	plan := map[string]any{"success": true, "id": v.ID, "recommendedVersion": target,
		"context": map[string]any{"ecosystem": c.q.Get("ecosystem"), "packageName": c.q.Get("packageName"),
			"currentVersion": c.q.Get("currentVersion")},
		"steps": []map[string]any{{"action": "upgrade", "description": c.s.prose("Upgrade to " + target + " or later.")}}}
	if c.q.Get("includeGuidance") == "true" {
		plan["guidance"] = c.s.prose("Prioritise internet-facing services. " + v.Workaround)
	}
	if c.q.Get("includeVerificationSteps") == "true" {
		plan["verificationSteps"] = []string{"Rebuild and check the resolved version in the lock file."}
	}
	return ok(plan)
})

var getWorkarounds = withVuln(func(c *call, v *Vuln) answer {
	var items []map[string]any
	if strings.TrimSpace(v.Workaround) != "" {
		items = append(items, map[string]any{"source": "vendor", "description": v.Workaround})
	}
	return ok(map[string]any{"success": true, "id": v.ID, "items": nonNil(items)})
})

var getAdvisories = withVuln(func(c *call, v *Vuln) answer {
	return ok(map[string]any{"success": true, "id": v.ID, "items": []map[string]any{
		{"source": "nvd", "url": "https://nvd.nist.gov/vuln/detail/" + v.ID, "title": v.Title, "summary": v.Description},
		{"source": "ghsa", "url": "https://github.com/advisories", "title": v.Title, "summary": v.Description},
	}})
})

var getCWEGuidance = withVuln(func(c *call, v *Vuln) answer {
	var items []map[string]any
	for _, cwe := range v.CWEs {
		items = append(items, map[string]any{"cwe": cwe, "guidance": c.s.prose("Validate and constrain untrusted input for " + cwe + ".")})
	}
	return ok(map[string]any{"success": true, "id": v.ID, "items": nonNil(items)})
})

var getVulnKEV = withVuln(func(c *call, v *Vuln) answer {
	var sources []map[string]any
	if v.KEV {
		sources = []map[string]any{{"source": "cisa", "dateAdded": v.Published.AddDate(0, 0, 1).Format(time.DateOnly),
			"dueDate": v.KEVDueDate, "reason": "known-exploited"},
			{"source": "vulnetix", "dateAdded": v.Published.Format(time.DateOnly), "reason": "weaponized-exploit"}}
	}
	return ok(map[string]any{"success": true, "id": v.ID, "inKev": v.KEV, "sources": nonNil(sources)})
})

var getVulnExploits = withVuln(func(c *call, v *Vuln) answer {
	return ok(map[string]any{"success": true, "id": v.ID, "items": nonNil(v.Exploits)})
})

func iocsOf(v *Vuln) []map[string]any {
	if len(v.Exploits) == 0 {
		return nil
	}
	return []map[string]any{{"cveId": v.ID, "type": "ip", "value": "192.0.2.10", "country": "NL", "asn": "AS64500",
		"behavior": "scanner", "reputation": "malicious"}}
}

var getVulnIOCs = withVuln(func(c *call, v *Vuln) answer { return paged(c, nonNil(iocsOf(v))) })

var getSightings = withVuln(func(c *call, v *Vuln) answer {
	return ok(map[string]any{"success": true, "id": v.ID, "count": 42 * len(v.Exploits),
		"firstSeen": v.Published.Format(time.DateOnly), "lastSeen": v.Modified.Format(time.DateOnly)})
})

var getNuclei = withVuln(func(c *call, v *Vuln) answer {
	tmpl := "id: " + strings.ToLower(v.ID) + "\ninfo:\n  name: " + v.Title + "\n  severity: " + strings.ToLower(v.Severity) + "\n"
	if c.q.Get("format") == "yaml" {
		return answer{status: http.StatusOK, raw: []byte(tmpl), contentType: "application/yaml"}
	}
	return ok(map[string]any{"success": true, "id": v.ID, "templates": []map[string]any{{"id": strings.ToLower(v.ID), "template": tmpl}}})
})

func rulesOf(s *Server, v *Vuln, kind string) []map[string]any {
	if len(v.Exploits) == 0 {
		return nil
	}
	text := `alert tcp any any -> any any (msg:"` + v.ID + ` ` + s.prose("exploit attempt") + `"; sid:1000001;)`
	if kind == "yara-rules" {
		text = "rule " + strings.ReplaceAll(v.ID, "-", "_") + " { meta: description = \"" + s.prose(v.Title) + "\" strings: $a = \"jndi:\" condition: $a }"
	}
	return []map[string]any{{"id": kind + "-" + v.ID, "cveId": v.ID, "source": "community", "rule": text}}
}

var getVulnRules = withVuln(func(c *call, v *Vuln) answer {
	kind := c.r.URL.EscapedPath()[strings.LastIndex(c.r.URL.EscapedPath(), "/")+1:]
	return paged(c, nonNil(rulesOf(c.s, v, kind)))
})

func techniquesOf(v *Vuln) []map[string]any {
	return []map[string]any{{"techniqueId": "T1190", "name": "Exploit Public-Facing Application",
		"tactic": "initial-access", "cveId": v.ID}}
}

var getVulnTechniques = withVuln(func(c *call, v *Vuln) answer {
	return ok(map[string]any{"success": true, "id": v.ID, "items": techniquesOf(v)})
})

var getTreeSitter = withVuln(func(c *call, v *Vuln) answer {
	return ok(map[string]any{"success": true, "id": v.ID, "language": c.q.Get("language"),
		"queries": []string{"(method_invocation name: (identifier) @m (#eq? @m \"lookup\"))"}})
})

// SetVEX records an org's VEX statement for a vulnerability (status such as
// "not_affected" or "affected"). /vex is org-scoped: other orgs never see it.
func (s *Server) SetVEX(orgID, vulnID, status string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o := s.orgLocked(orgID)
	if o.vex == nil {
		o.vex = map[string]string{}
	}
	o.vex[strings.ToUpper(vulnID)] = status
}

func vexOf(o *org, id string) []map[string]any {
	var out []map[string]any
	ids := make([]string, 0, len(o.vex))
	for k := range o.vex {
		ids = append(ids, k)
	}
	sortStrings(ids)
	for _, k := range ids {
		if id == "" || k == strings.ToUpper(id) {
			out = append(out, map[string]any{"vulnId": k, "status": o.vex[k], "supplier": "uploaded-vex",
				"justification": "component_not_present"})
		}
	}
	return out
}

var getVulnVEX = withVuln(func(c *call, v *Vuln) answer {
	c.s.mu.Lock()
	items := vexOf(c.org, v.ID)
	c.s.mu.Unlock()
	return ok(map[string]any{"success": true, "id": v.ID, "items": nonNil(items)})
})
