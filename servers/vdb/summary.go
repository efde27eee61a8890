package vdb

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/bulwarkmcp/bulwark/kernel"
)

// summaryFields are the record members a summary keeps (compacted), in the
// names the VDB and OSV use.
var summaryFields = []string{
	"id", "identifier", "cveId", "aliases", "title", "summary", "state", "status",
	"published", "publishedAt", "datePublished", "modified", "updatedAt", "dateUpdated",
	"severity", "cvss", "cvssScore", "cvssV3", "cvssV31", "cvssV4", "epss", "cess",
	"kev", "inKev", "cwe", "cwes", "weaknesses", "vendor", "product", "metrics",
}

// countedFields are long lists a summary only counts.
var countedFields = []string{"affected", "references", "fixes", "exploits", "advisories", "timeline", "sources", "packages"}

// summarize turns a vulnerability record into its summary: the chosen
// fields, the description cut to 1000 characters, the first ten reference
// URLs, the size of each long list, and the names of the members left out.
// It decodes only the top level and the members it keeps, so a 2 MB record
// costs little more than scanning it once.
func summarize(body []byte) (map[string]any, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil {
		return nil, kernel.Errorf(kernel.UpstreamError, "The VDB record is not a JSON object this server can read.").WithCause(err)
	}
	sum := map[string]any{"bytes": len(body)}
	for _, k := range summaryFields {
		if raw, ok := top[k]; ok {
			if v, err := decode(raw); err == nil {
				sum[k] = compact(v, 2)
			}
		}
	}
	for _, k := range []string{"description", "details"} {
		var s string
		if raw, ok := top[k]; ok && json.Unmarshal(raw, &s) == nil {
			sum[k] = cut(s, summaryRunes)
		}
	}
	if _, ok := sum["description"]; !ok {
		if d := englishDescription(top["descriptions"]); d != "" {
			sum["description"] = cut(d, summaryRunes)
			sum["descriptions"] = nil // summarised as description
		}
	}
	counts := map[string]int{}
	for _, k := range countedFields {
		var list []json.RawMessage
		if raw, ok := top[k]; ok && json.Unmarshal(raw, &list) == nil {
			counts[k] = len(list)
		}
	}
	if len(counts) > 0 {
		sum["counts"] = counts
	}
	if urls := referenceURLs(top["references"], 10); len(urls) > 0 {
		sum["referenceUrls"] = urls
	}
	var omitted []string
	for k := range top {
		if _, kept := sum[k]; !kept && !slices.Contains(countedFields, k) {
			omitted = append(omitted, k)
		}
	}
	delete(sum, "descriptions")
	slices.Sort(omitted)
	if len(omitted) > 0 {
		sum["omittedFields"] = compact(toAny(omitted), 1)
	}
	return sum, nil
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// referenceURLs returns up to n URLs of a references list (strings, or
// objects with url).
func referenceURLs(raw json.RawMessage, n int) []string {
	var list []json.RawMessage
	if len(raw) == 0 || json.Unmarshal(raw, &list) != nil {
		return nil
	}
	var out []string
	for _, r := range list {
		if len(out) == n {
			break
		}
		var s string
		var o struct {
			URL string `json:"url"`
		}
		switch {
		case json.Unmarshal(r, &s) == nil && s != "":
			out = append(out, cut(s, 500))
		case json.Unmarshal(r, &o) == nil && o.URL != "":
			out = append(out, cut(o.URL, 500))
		}
	}
	return out
}

// englishDescription picks the English value of a CVE-style descriptions
// list ([{lang, value}]), else the first.
func englishDescription(raw json.RawMessage) string {
	var list []struct {
		Lang  string `json:"lang"`
		Value string `json:"value"`
	}
	if len(raw) == 0 || json.Unmarshal(raw, &list) != nil || len(list) == 0 {
		return ""
	}
	for _, d := range list {
		if strings.HasPrefix(strings.ToLower(d.Lang), "en") {
			return d.Value
		}
	}
	return list[0].Value
}
