package vdbapi

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// CatalogueSize is how many generated entries /kev serves besides the
// seeded KEV records, so paging crosses several pages.
const CatalogueSize = 150

var ecosystems = []string{"npm", "pypi", "maven", "go", "cargo", "nuget", "rubygems", "packagist", "deb", "rpm", "apk", "hex", "pub"}

func knownEcosystem(e string) bool {
	for _, x := range ecosystems {
		if x == e {
			return true
		}
	}
	return false
}

func kevEntry(v *Vuln) map[string]any {
	return map[string]any{"cveId": v.ID, "vendor": v.Vendor, "product": v.Product, "source": "cisa",
		"dateAdded": v.Published.AddDate(0, 0, 1).Format(time.DateOnly), "dueDate": v.KEVDueDate,
		"shortDescription": v.Description}
}

func (s *Server) kevCatalogue() []map[string]any {
	var out []map[string]any
	for _, v := range s.allVulns() {
		if v.KEV {
			out = append(out, kevEntry(v))
		}
	}
	for i := range CatalogueSize {
		out = append(out, map[string]any{"cveId": fmt.Sprintf("CVE-2020-%d", 10000+i),
			"vendor": fmt.Sprintf("vendor%d", i%7), "product": fmt.Sprintf("product%d", i%11),
			"source":    []string{"cisa", "vulnetix", "enisa", "vulncheck"}[i%4],
			"dateAdded": day(2020, 1, 1).AddDate(0, 0, i).Format(time.DateOnly), "dueDate": "",
			"shortDescription": "Generated catalogue entry."})
	}
	return out
}

func listKEV(c *call) answer {
	ids, sources := c.multi("cveId"), c.multi("source")
	var out []map[string]any
	for _, e := range c.s.kevCatalogue() {
		if len(ids) > 0 && !contains(ids, e["cveId"].(string)) || len(sources) > 0 && !contains(sources, e["source"].(string)) {
			continue
		}
		if v := c.q.Get("vendor"); v != "" && v != e["vendor"] {
			continue
		}
		if p := c.q.Get("product"); p != "" && p != e["product"] {
			continue
		}
		if since := c.q.Get("since"); since != "" && e["dateAdded"].(string) < since {
			continue
		}
		out = append(out, e)
	}
	return paged(c, out)
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if strings.EqualFold(x, v) {
			return true
		}
	}
	return false
}

func listVulnetixKEV(c *call) answer {
	var out []map[string]any
	for _, e := range c.s.kevCatalogue() {
		if e["source"] == "vulnetix" || e["source"] == "cisa" {
			out = append(out, map[string]any{"cveId": e["cveId"], "reason": "known-exploited", "dateAdded": e["dateAdded"]})
		}
	}
	return paged(c, out)
}

func searchScorecards(c *call) answer {
	q := c.q.Get("q")
	if q == "" {
		return badRequest("Missing required parameter: q")
	}
	return ok(map[string]any{"success": true, "items": []map[string]any{{"repo": "github.com/" + q, "score": 6.4}}})
}

func exploitRows(s *Server) []map[string]any {
	var out []map[string]any
	for _, v := range s.allVulns() {
		for _, e := range v.Exploits {
			out = append(out, map[string]any{"id": e.ID, "cveId": v.ID, "source": e.Source, "url": e.URL,
				"description": e.Description, "maturity": e.Maturity, "severity": v.Severity, "epss": v.EPSS,
				"inKev": v.KEV, "ecosystem": firstEcosystem(v)})
		}
	}
	return out
}

func firstEcosystem(v *Vuln) string {
	if len(v.Affected) == 0 {
		return ""
	}
	return v.Affected[0].Ecosystem
}

func searchExploits(c *call) answer {
	minEpss, err := optFloat(c, "minEpss")
	if err != nil {
		return badRequest(err.Error())
	}
	var out []map[string]any
	for _, e := range exploitRows(c.s) {
		if eco := c.q.Get("ecosystem"); eco != "" && eco != e["ecosystem"] {
			continue
		}
		if src := c.q.Get("source"); src != "" && src != e["source"] {
			continue
		}
		if c.q.Get("inKev") == "true" && e["inKev"] != true {
			continue
		}
		if q := c.q.Get("q"); q != "" && !strings.Contains(strings.ToLower(e["description"].(string)+" "+e["cveId"].(string)), strings.ToLower(q)) {
			continue
		}
		if e["epss"].(float64) < minEpss {
			continue
		}
		out = append(out, e)
	}
	return paged(c, out)
}

func optFloat(c *call, k string) (float64, error) {
	v := c.q.Get(k)
	if v == "" {
		return 0, nil
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f < 0 || f > 100 {
		return 0, fmt.Errorf("%s must be a number", k)
	}
	return f, nil
}

func findExploit(s *Server, id string) (*Vuln, *Exploit) {
	for _, v := range s.allVulns() {
		for i := range v.Exploits {
			if v.Exploits[i].ID == id {
				return v, &v.Exploits[i]
			}
		}
	}
	return nil, nil
}

func getExploit(c *call) answer {
	v, e := findExploit(c.s, c.p["eid"])
	if e == nil {
		return notFound("Exploit")
	}
	return ok(map[string]any{"success": true, "id": e.ID, "cveId": v.ID, "source": e.Source, "url": e.URL,
		"description": e.Description, "maturity": e.Maturity})
}

// getPoC answers the binary archive of reference §2 (octet-stream, with the
// hash and original URL headers).
func getPoC(c *call) answer {
	_, e := findExploit(c.s, c.p["eid"])
	if e == nil {
		return notFound("Exploit")
	}
	body := []byte("PK\x03\x04fake-archive\x00poc.sh\x00" + e.PoC)
	sum := sha256.Sum256(body)
	return answer{status: http.StatusOK, raw: body, contentType: "application/octet-stream", header: map[string]string{
		"Content-Disposition": `attachment; filename="poc-` + e.ID + `.zip"`,
		"X-Vulnetix-Sha256":   hex.EncodeToString(sum[:]), "X-Vulnetix-Original-Url": e.URL}}
}

func enumeration(c *call) answer {
	name := strings.TrimPrefix(c.r.URL.EscapedPath(), APIVersion+"/")
	values := map[string]any{
		"ecosystems":        ecosystems,
		"sources":           []string{"nvd", "osv", "ghsa", "cisa-kev", "vulncheck", "enisa", "first-epss"},
		"metric-types":      []string{"cvssV2", "cvssV3_0", "cvssV3_1", "cvssV4_0", "epss", "cess", "ssvc"},
		"fix-distributions": []string{"debian", "ubuntu", "fedora", "alpine", "rhel"},
		"exploit-sources":   []string{"github", "exploitdb", "metasploit", "nuclei"},
		"exploit-types":     []string{"poc", "weaponized", "scanner"},
		"summary":           map[string]any{"vulnerabilities": 312456, "exploits": 58231, "kev": 1402},
	}[name]
	return ok(map[string]any{"success": true, "items": values})
}

// threatSearch filters rows by the repeatable cveId parameter.
func threatSearch(c *call, rows []map[string]any) answer {
	ids := c.multi("cveId")
	var out []map[string]any
	for _, r := range rows {
		if len(ids) == 0 || contains(ids, r["cveId"].(string)) {
			out = append(out, r)
		}
	}
	return paged(c, out)
}

func searchIOCs(c *call) answer {
	var rows []map[string]any
	for _, v := range c.s.allVulns() {
		rows = append(rows, iocsOf(v)...)
	}
	return threatSearch(c, rows)
}

func searchRules(c *call) answer {
	kind := strings.TrimPrefix(c.r.URL.EscapedPath(), APIVersion+"/")
	var rows []map[string]any
	for _, v := range c.s.allVulns() {
		rows = append(rows, rulesOf(c.s, v, kind)...)
	}
	return threatSearch(c, rows)
}

func searchTechniques(c *call) answer {
	var rows []map[string]any
	for _, v := range c.s.allVulns() {
		if len(v.Exploits) > 0 {
			rows = append(rows, techniquesOf(v)...)
		}
	}
	return threatSearch(c, rows)
}

func listVEX(c *call) answer {
	c.s.mu.Lock()
	items := vexOf(c.org, "")
	c.s.mu.Unlock()
	if st := c.q.Get("status"); st != "" {
		var kept []map[string]any
		for _, it := range items {
			if it["status"] == st {
				kept = append(kept, it)
			}
		}
		items = kept
	}
	return paged(c, nonNil(items))
}

// triage: default limit 50, max 200; sort=epss needs minEpss >= 0.3 or a
// percentile floor, else 400 (reference §2).
func triage(c *call) answer {
	p, err := parsePage(c.q, 50, 200)
	if err != nil {
		return badRequest(err.Error())
	}
	minEpss, err := optFloat(c, "minEpss")
	if err != nil {
		return badRequest(err.Error())
	}
	minPct, err := optFloat(c, "minEpssPercentile")
	if err != nil {
		return badRequest(err.Error())
	}
	sortBy := c.q.Get("sort")
	switch sortBy {
	case "", "cvss", "cess", "epss", "published", "kev-due":
	default:
		return badRequest("sort must be one of cvss, cess, epss, published, kev-due")
	}
	if sortBy == "epss" && minEpss < 0.3 && minPct == 0 {
		return badRequest("sort=epss requires minEpss >= 0.3 or minEpssPercentile")
	}
	var out []map[string]any
	for _, v := range c.s.allVulns() {
		if v.EPSS < minEpss || v.EPSSPercentile < minPct || (c.q.Get("inKev") == "true" && !v.KEV) {
			continue
		}
		if sev := c.q.Get("severity"); sev != "" && !strings.EqualFold(sev, v.Severity) {
			continue
		}
		out = append(out, map[string]any{"id": v.ID, "severity": v.Severity, "cvss": v.CVSS, "epss": v.EPSS,
			"inKev": v.KEV, "published": v.Published.Format(time.DateOnly), "title": v.Title})
	}
	return list(out, p)
}

// packages are the fake's package index: (ecosystem, name) -> versions.
type pkgInfo struct{ eco, name string }

func (s *Server) packages() map[pkgInfo][]string {
	out := map[pkgInfo][]string{}
	for _, v := range s.allVulns() {
		for _, a := range v.Affected {
			k := pkgInfo{a.Ecosystem, a.Package}
			if _, seen := out[k]; !seen {
				out[k] = []string{a.Introduced}
			}
			if a.Fixed != "" {
				out[k] = append(out[k], a.Fixed)
			}
		}
	}
	return out
}

func searchPackages(c *call) answer {
	q := c.q.Get("q")
	if q == "" {
		return badRequest("Missing required parameter: q")
	}
	var out []map[string]any
	for k, vs := range c.s.packages() {
		if eco := c.q.Get("ecosystem"); eco != "" && eco != k.eco {
			continue
		}
		if strings.Contains(strings.ToLower(k.name), strings.ToLower(q)) {
			out = append(out, map[string]any{"ecosystem": k.eco, "name": k.name, "latestVersion": vs[len(vs)-1]})
		}
	}
	sortRows(out, "name")
	return paged(c, nonNil(out))
}

func sortRows(rows []map[string]any, key string) {
	for i := 1; i < len(rows); i++ {
		for j := i; j > 0 && fmt.Sprint(rows[j][key]) < fmt.Sprint(rows[j-1][key]); j-- {
			rows[j], rows[j-1] = rows[j-1], rows[j]
		}
	}
}

// pkgName is the package name of a root-level route: {package}, or
// {group}:{artifact} for Maven, or @scope/name for an npm scope sent as
// its own segment ({group} "@scope").
func pkgName(c *call) string {
	if g, ok := c.p["group"]; ok {
		if c.p["eco"] == "npm" && strings.HasPrefix(g, "@") {
			return g + "/" + c.p["artifact"]
		}
		return g + ":" + c.p["artifact"]
	}
	return c.p["package"]
}

func getPackage(c *call) answer {
	name := pkgName(c)
	for k, vs := range c.s.packages() {
		if k.eco == c.p["eco"] && k.name == name {
			return ok(map[string]any{"success": true, "ecosystem": k.eco, "name": k.name,
				"latestVersion": vs[len(vs)-1], "versionCount": len(vs)})
		}
	}
	return notFound("Package")
}

func packageVersions(c *call) answer {
	name := pkgName(c)
	for k, vs := range c.s.packages() {
		if (c.p["eco"] == "" || k.eco == c.p["eco"]) && k.name == name {
			var out []map[string]any
			for _, v := range vs {
				out = append(out, map[string]any{"version": v, "ecosystem": k.eco})
			}
			return ok(map[string]any{"success": true, "name": name, "versions": out})
		}
	}
	return notFound("Package")
}

func packageVulns(c *call) answer {
	var out []map[string]any
	for _, v := range c.s.allVulns() {
		for _, a := range v.Affected {
			if a.Package == c.p["package"] || strings.HasSuffix(a.Package, ":"+c.p["package"]) {
				out = append(out, map[string]any{"id": v.ID, "severity": v.Severity, "ecosystem": a.Ecosystem,
					"introduced": a.Introduced, "fixed": a.Fixed})
				break
			}
		}
	}
	if len(out) == 0 {
		return notFound("Package")
	}
	return paged(c, out)
}

func getProduct(c *call) answer {
	var out []map[string]any
	for _, v := range c.s.allVulns() {
		if strings.EqualFold(v.Product, c.p["name"]) {
			out = append(out, map[string]any{"id": v.ID, "severity": v.Severity, "vendor": v.Vendor})
		}
	}
	if len(out) == 0 {
		return notFound("Product")
	}
	return paged(c, out)
}

var eolProducts = map[string][]map[string]any{
	"python": {{"release": "3.8", "eol": "2024-10-07", "isEol": true}, {"release": "3.12", "eol": "2028-10-31", "isEol": false}},
	"nodejs": {{"release": "16", "eol": "2023-09-11", "isEol": true}, {"release": "22", "eol": "2027-04-30", "isEol": false}},
}

func getEOLProduct(c *call) answer {
	rel, found := eolProducts[c.p["p"]]
	if !found {
		return notFound("Product")
	}
	return ok(map[string]any{"success": true, "product": c.p["p"], "releases": rel})
}

func getEOLRelease(c *call) answer {
	for _, r := range eolProducts[c.p["p"]] {
		if r["release"] == c.p["r"] {
			return ok(map[string]any{"success": true, "product": c.p["p"], "release": r})
		}
	}
	return notFound("Release")
}

func getEOLPackage(c *call) answer {
	if !knownEcosystem(c.p["ecosystem"]) {
		return notFound("Ecosystem")
	}
	return ok(map[string]any{"success": true, "ecosystem": c.p["ecosystem"], "package": c.p["pkg"],
		"version": c.p["v"], "isEol": strings.HasPrefix(c.p["v"], "0."), "eolDate": nil})
}

func cloudLocators(c *call) answer {
	return ok(map[string]any{"success": true, "items": []map[string]any{{"vendor": c.q.Get("vendor"),
		"product": c.q.Get("product"), "locator": "arn:aws:*"}}})
}

// yearMonth parses {year}/{month} and refuses a month after the current UTC
// month ("Cannot query future months", reference §2).
func yearMonth(c *call) (time.Time, answer, bool) {
	y, err1 := decimal(c.p["year"])
	m, err2 := decimal(c.p["month"])
	if err1 != nil || err2 != nil || m < 1 || m > 12 || y < 1999 || y > 9999 {
		return time.Time{}, badRequest("Invalid year or month"), false
	}
	t := time.Date(y, time.Month(m), 1, 0, 0, 0, 0, time.UTC)
	now := c.s.now().UTC()
	if t.After(time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)) {
		return time.Time{}, badRequest("Cannot query future months"), false
	}
	return t, answer{}, true
}

func gcveMonth(c *call) answer {
	t, a, good := yearMonth(c)
	if !good {
		return a
	}
	var out []map[string]any
	for i := range 30 {
		out = append(out, map[string]any{"id": fmt.Sprintf("GCVE-1-%d-%04d", t.Year(), int(t.Month())*100+i),
			"published": t.AddDate(0, 0, i%28).Format(time.DateOnly)})
	}
	return paged(c, out)
}

func gcveRange(c *call) answer {
	start, end := c.q.Get("start"), c.q.Get("end")
	if _, err := time.Parse(time.DateOnly, start); err != nil {
		return badRequest("start must be a date (YYYY-MM-DD)")
	}
	if _, err := time.Parse(time.DateOnly, end); err != nil {
		return badRequest("end must be a date (YYYY-MM-DD)")
	}
	return ok(map[string]any{"success": true, "start": start, "end": end,
		"items": []map[string]any{{"id": "GCVE-1-2025-0001", "published": start}}})
}

func identifiersMonth(c *call) answer {
	t, a, good := yearMonth(c)
	if !good {
		return a
	}
	var out []map[string]any
	for _, v := range c.s.allVulns() {
		if v.Published.Year() == t.Year() && v.Published.Month() == t.Month() {
			out = append(out, map[string]any{"id": v.ID, "aliases": nonNil(v.Aliases)})
		}
	}
	return paged(c, nonNil(out))
}

func identifiers(c *call) answer {
	var out []map[string]any
	for _, v := range c.s.allVulns() {
		if strings.HasPrefix(v.ID, strings.ToUpper(c.q.Get("prefix"))) {
			out = append(out, map[string]any{"id": v.ID, "aliases": nonNil(v.Aliases)})
		}
	}
	return paged(c, nonNil(out))
}

func trends(c *call) answer {
	feed := strings.TrimPrefix(c.r.URL.EscapedPath(), APIVersion+"/")
	return ok(map[string]any{"success": true, "feed": feed, "items": []map[string]any{
		{"period": "2025-01", "count": 17, "note": c.s.prose("Generated trend point.")},
		{"period": "2025-02", "count": 23, "note": c.s.prose("Generated trend point.")}}})
}

func patchTuesday(c *call) answer {
	if _, err := time.Parse(time.DateOnly, c.p["date"]); err != nil {
		return badRequest("date must be YYYY-MM-DD")
	}
	return ok(map[string]any{"success": true, "date": c.p["date"], "items": []map[string]any{{"id": "CVE-2025-21333", "severity": "Important"}}})
}

func rawSources(c *call) answer {
	return ok(map[string]any{"success": true, "items": []string{"nvd", "osv", "ghsa", "cisa-kev"}})
}

// getRaw answers a source document archive (octet-stream, with the hash and
// storage-path headers). For a record added with AddBigVuln the archive is
// as large as the record and streamed; its hash header is then absent, as
// the fake never holds the body.
func getRaw(c *call) answer {
	v, big, found := c.s.vuln(c.p["cve"])
	if !found {
		return notFound("Raw document")
	}
	head := []byte("\x1f\x8b\x08\x00fake-tar\x00")
	path := "raw/" + c.p["source"] + "/" + v.ID + ".tar.gz"
	if big > 0 {
		return answer{status: http.StatusOK, header: map[string]string{"X-Vulnetix-R2-Path": path},
			stream: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/octet-stream")
				w.Header().Set("Content-Length", strconv.Itoa(big))
				w.WriteHeader(http.StatusOK)
				_, _ = w.Write(head)
				writePadding(r.Context(), w, int64(big-len(head)), "raw-bytes ")
			}}
	}
	body := append(head, mustJSON(record(v))...)
	sum := sha256.Sum256(body)
	return answer{status: http.StatusOK, raw: body, contentType: "application/octet-stream", header: map[string]string{
		"X-Vulnetix-Sha256": hex.EncodeToString(sum[:]), "X-Vulnetix-R2-Path": path}}
}

// spec is a minimal OpenAPI document; like the real one it leaves out the
// cli.* routes.
func spec(c *call) answer {
	paths := map[string]any{}
	for _, r := range routes {
		paths["/"+strings.Join(r.pattern, "/")] = map[string]any{"get": map[string]any{}}
	}
	return ok(map[string]any{"openapi": "3.1.0", "info": map[string]any{"title": "VDB API (fake)", "version": "2"},
		"paths": paths})
}
