package dns

import (
	"github.com/google/jsonschema-go/jsonschema"

	"github.com/bulwarkmcp/bulwark/kernel/argschema"
)

// Struct tags give the schemas their descriptions; the rules that tags
// cannot state (patterns, enums, bounds) are added here, to the schema the
// kernel generated, and checked again in the handlers.

const (
	zonePattern  = `^[A-Za-z0-9._-]+$`
	rrsetPattern = `^[A-Za-z0-9@*._-]+$`
)

func intp(n int) *int         { return &n }
func f64p(n float64) *float64 { return &n }

// The rules of the shared argument types (reference §8.1).
var (
	zoneRule      = argschema.All(argschema.Pattern(zonePattern), argschema.MinLen(1), argschema.MaxLen(maxSegment))
	rrsetNameRule = argschema.All(argschema.Pattern(rrsetPattern), argschema.MinLen(1), argschema.MaxLen(maxSegment))
	typeRule      = argschema.Enum(RRSetTypes)
	ttlRule       = argschema.Between(minTTL, maxTTL)
	labelsRule    = argschema.All(argschema.Only("object"), func(p *jsonschema.Schema) {
		p.MaxProperties = intp(maxLabels)
		p.AdditionalProperties.MaxLength = intp(maxLabelPartLen)
	})
	recordsRule = argschema.All(argschema.Only("array"), argschema.MinItems(1), argschema.MaxItems(maxRecords), argschema.ItemsOf(argschema.All(
		argschema.Prop("value", argschema.All(argschema.MinLen(1), argschema.MaxLen(maxValueLen))),
		argschema.Prop("comment", argschema.MaxLen(maxCommentLen)),
	)))
	zonefileRule    = argschema.All(argschema.MinLen(1), argschema.MaxLen(maxZonefileLen))
	selectorRule    = argschema.MaxLen(maxSelectorLen)
	modeRule        = argschema.Enum(zoneModes)
	nameserversRule = argschema.All(argschema.Only("array"), argschema.MinItems(1), argschema.MaxItems(maxNameservers), argschema.ItemsOf(argschema.All(
		argschema.Prop("address", argschema.All(argschema.MinLen(1), argschema.MaxLen(maxAddressLen))),
		argschema.Prop("port", argschema.Between(1, 65535)),
		argschema.Prop("tsig_key", argschema.MaxLen(maxTSIGKeyLen)),
		argschema.Prop("tsig_algorithm", argschema.Enum(tsigAlgorithms)),
	)))
)

// rrsetRules are the rules of the zone/name/type triple.
func rrsetRules(extra map[string]argschema.Rule) map[string]argschema.Rule {
	m := map[string]argschema.Rule{"zone": zoneRule, "name": rrsetNameRule, "type": typeRule}
	for k, v := range extra {
		m[k] = v
	}
	return m
}

// listRules are the rules of sort, page and per_page.
func listRules(sortFields []string, maxPer int, extra map[string]argschema.Rule) map[string]argschema.Rule {
	var sorts []string
	for _, f := range sortFields {
		sorts = append(sorts, f, f+":asc", f+":desc")
	}
	m := map[string]argschema.Rule{
		"sort":     argschema.All(argschema.Only("array"), argschema.MaxItems(maxSorts), argschema.ItemsOf(argschema.Enum(sorts))),
		"page":     argschema.Between(1, maxPage),
		"per_page": argschema.Between(1, float64(maxPer)),
	}
	for k, v := range extra {
		m[k] = v
	}
	return m
}
