// Package argschema adds to a tool's generated input schema what Go struct
// tags cannot state — patterns, enums, bounds, item limits — so that the
// advertised schema says everything the handler will check:
//
//	argschema.Refine(kernel.NewTool(spec), map[string]argschema.Rule{
//		"zone": argschema.All(argschema.Pattern(`^[A-Za-z0-9._-]+$`), argschema.MaxLen(253)),
//		"ttl":  argschema.Between(60, 2147483647),
//	})
//
// The kernel validates every call against the refined schema. Handlers
// should still check what they rely on: a schema is also documentation.
package argschema

import (
	"fmt"
	"maps"
	"slices"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/bulwarkmcp/bulwark/kernel"
)

// A Rule refines one property's schema.
type Rule func(p *jsonschema.Schema)

// Refine applies rules to t's input schema, by property name, and returns
// t. A rule for a property the arguments do not have is a declaration
// error, reported by kernel.New at startup (the first such name in sorted
// order); no rule is applied then.
func Refine(t kernel.Tool, rules map[string]Rule) kernel.Tool {
	return t.RefineSchema(func(s *jsonschema.Schema) error {
		names := slices.Sorted(maps.Keys(rules))
		for _, name := range names {
			if _, ok := s.Properties[name]; !ok {
				return fmt.Errorf("argschema: no argument %q to refine", name)
			}
		}
		for _, name := range names {
			rules[name](s.Properties[name])
		}
		return nil
	})
}

// All applies every rule in turn.
func All(rs ...Rule) Rule {
	return func(p *jsonschema.Schema) {
		for _, r := range rs {
			r(p)
		}
	}
}

// Only sets the one JSON type (dropping the nullable form a pointer field
// gets).
func Only(typ string) Rule { return func(p *jsonschema.Schema) { p.Type, p.Types = typ, nil } }

// Enum limits a value to vs.
func Enum(vs []string) Rule {
	return func(p *jsonschema.Schema) {
		p.Enum = make([]any, len(vs))
		for i, v := range vs {
			p.Enum[i] = v
		}
	}
}

// ItemsOf applies r to an array's items.
func ItemsOf(r Rule) Rule { return func(p *jsonschema.Schema) { r(p.Items) } }

// Prop applies r to the property name of an object.
func Prop(name string, r Rule) Rule { return func(p *jsonschema.Schema) { r(p.Properties[name]) } }

// MinItems and MaxItems bound an array's length.
func MinItems(n int) Rule { return func(p *jsonschema.Schema) { p.MinItems = &n } }

// MaxItems bounds an array's length.
func MaxItems(n int) Rule { return func(p *jsonschema.Schema) { p.MaxItems = &n } }

// MinLen bounds a string's length, in characters.
func MinLen(n int) Rule { return func(p *jsonschema.Schema) { p.MinLength = &n } }

// MaxLen bounds a string's length, in characters.
func MaxLen(n int) Rule { return func(p *jsonschema.Schema) { p.MaxLength = &n } }

// Between bounds a number, both ends included.
func Between(lo, hi float64) Rule {
	return func(p *jsonschema.Schema) { p.Minimum, p.Maximum = &lo, &hi }
}

// Pattern sets a regular expression a string must match.
func Pattern(re string) Rule { return func(p *jsonschema.Schema) { p.Pattern = re } }
