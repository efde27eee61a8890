package argcheck

import "encoding/json"

// ApplyDefaults fills in the defaults of absent optional properties, at any
// depth of properties (not through $ref), as jsonschema-go's ApplyDefaults
// does: a missing property whose own properties have defaults becomes an
// object holding them.
func (v *Validator) ApplyDefaults(m map[string]any) error {
	return applyDefaults(v.root, m, 0)
}

func applyDefaults(n *node, m map[string]any, depth int) error {
	if depth > maxSchemaDepth {
		return nil
	}
	for _, name := range n.propNames {
		if n.required1[name] {
			continue // a required property's default is never used
		}
		sub := n.props[name]
		v, present := m[name]
		switch {
		case !present && n.defaults[name] != nil:
			var d any
			if err := json.Unmarshal(n.defaults[name], &d); err != nil {
				return err
			}
			if dm, ok := d.(map[string]any); ok {
				if err := applyDefaults(sub, dm, depth+1); err != nil {
					return err
				}
			}
			m[name] = d
		case present:
			if vm, ok := v.(map[string]any); ok {
				if err := applyDefaults(sub, vm, depth+1); err != nil {
					return err
				}
			}
		case hasDefaults(sub, depth+1):
			child := map[string]any{}
			if err := applyDefaults(sub, child, depth+1); err != nil {
				return err
			}
			m[name] = child
		}
	}
	return nil
}

// hasDefaults reports whether a property below n has a default.
func hasDefaults(n *node, depth int) bool {
	if len(n.defaults) > 0 {
		return true
	}
	if depth > maxSchemaDepth {
		return false
	}
	for _, sub := range n.props {
		if hasDefaults(sub, depth+1) {
			return true
		}
	}
	return false
}
