package dns

import (
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/bulwarkmcp/bulwark/kernel"
)

// Struct tags give the schemas their descriptions; the rules that tags
// cannot state (patterns, enums, bounds) are added here, to the schema the
// kernel generated, and checked again in the handlers.

// rule refines one property's schema.
type rule func(p *jsonschema.Schema)

// refine applies rules to t's input schema, by property name. A rule for a
// property the arguments do not have is a programming error.
func refine(t kernel.Tool, rules map[string]rule) kernel.Tool {
	s := t.InputSchema()
	if s == nil {
		return t // a declaration error; kernel.New reports it
	}
	for name, r := range rules {
		p, ok := s.Properties[name]
		if !ok {
			panic(fmt.Sprintf("dns: tool %s has no argument %q to refine", t.Name(), name))
		}
		r(p)
	}
	return t
}

const (
	zonePattern  = `^[A-Za-z0-9._-]+$`
	rrsetPattern = `^[A-Za-z0-9@*._-]+$`
)

func intp(n int) *int         { return &n }
func f64p(n float64) *float64 { return &n }
func anys(vs []string) []any {
	out := make([]any, len(vs))
	for i, v := range vs {
		out[i] = v
	}
	return out
}
func only(t string) rule { return func(p *jsonschema.Schema) { p.Type, p.Types = t, nil } }
func all(rs ...rule) rule {
	return func(p *jsonschema.Schema) {
		for _, r := range rs {
			r(p)
		}
	}
}
func enum(vs []string) rule { return func(p *jsonschema.Schema) { p.Enum = anys(vs) } }
func itemsOf(r rule) rule   { return func(p *jsonschema.Schema) { r(p.Items) } }
func maxItems(n int) rule   { return func(p *jsonschema.Schema) { p.MaxItems = intp(n) } }
func minItems(n int) rule   { return func(p *jsonschema.Schema) { p.MinItems = intp(n) } }
func maxLen(n int) rule     { return func(p *jsonschema.Schema) { p.MaxLength = intp(n) } }
func minLen(n int) rule     { return func(p *jsonschema.Schema) { p.MinLength = intp(n) } }
func between(lo, hi float64) rule {
	return func(p *jsonschema.Schema) { p.Minimum, p.Maximum = f64p(lo), f64p(hi) }
}
func pattern(re string) rule { return func(p *jsonschema.Schema) { p.Pattern = re } }
func prop(name string, r rule) rule {
	return func(p *jsonschema.Schema) { r(p.Properties[name]) }
}

// The rules of the shared argument types (reference §8.1).
var (
	zoneRule      = all(pattern(zonePattern), minLen(1), maxLen(maxSegment))
	rrsetNameRule = all(pattern(rrsetPattern), minLen(1), maxLen(maxSegment))
	typeRule      = enum(RRSetTypes)
	ttlRule       = between(minTTL, maxTTL)
	labelsRule    = all(only("object"), func(p *jsonschema.Schema) {
		p.MaxProperties = intp(maxLabels)
		p.AdditionalProperties.MaxLength = intp(maxLabelPartLen)
	})
	recordsRule = all(only("array"), minItems(1), maxItems(maxRecords), itemsOf(all(
		prop("value", all(minLen(1), maxLen(maxValueLen))),
		prop("comment", maxLen(maxCommentLen)),
	)))
	zonefileRule    = all(minLen(1), maxLen(maxZonefileLen))
	selectorRule    = maxLen(maxSelectorLen)
	modeRule        = enum(zoneModes)
	nameserversRule = all(only("array"), minItems(1), maxItems(maxNameservers), itemsOf(all(
		prop("address", all(minLen(1), maxLen(maxAddressLen))),
		prop("port", between(1, 65535)),
		prop("tsig_key", maxLen(maxTSIGKeyLen)),
		prop("tsig_algorithm", enum(tsigAlgorithms)),
	)))
)

// rrsetRules are the rules of the zone/name/type triple.
func rrsetRules(extra map[string]rule) map[string]rule {
	m := map[string]rule{"zone": zoneRule, "name": rrsetNameRule, "type": typeRule}
	for k, v := range extra {
		m[k] = v
	}
	return m
}

// listRules are the rules of sort, page and per_page.
func listRules(sortFields []string, maxPer int, extra map[string]rule) map[string]rule {
	var sorts []string
	for _, f := range sortFields {
		sorts = append(sorts, f, f+":asc", f+":desc")
	}
	m := map[string]rule{
		"sort":     all(only("array"), maxItems(maxSorts), itemsOf(enum(sorts))),
		"page":     between(1, maxPage),
		"per_page": between(1, float64(maxPer)),
	}
	for k, v := range extra {
		m[k] = v
	}
	return m
}
