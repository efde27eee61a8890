package argcheck

import (
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// FuzzOnlyDeclared: the shortcut that spares Validate an iteration over the
// arguments never says "only declared properties" when one is not (the
// additionalProperties failure would then be missed), and says it whenever
// all are (for a schema without patternProperties and at most 8
// properties).
func FuzzOnlyDeclared(f *testing.F) {
	f.Add("zone,name", false)
	f.Add("zone,extra", false)
	f.Add("", true)
	f.Add("a,b,c,d,e,f,g,h,i", true)
	f.Fuzz(func(t *testing.T, keys string, many bool) {
		props := map[string]*jsonschema.Schema{"zone": {}, "name": {}, "ttl": {}}
		if many {
			for _, p := range strings.Split("a,b,c,d,e,f,g,h,i", ",") {
				props[p] = &jsonschema.Schema{}
			}
		}
		v, err := Compile(&jsonschema.Schema{Type: "object", Properties: props, AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}}})
		if err != nil {
			t.Fatal(err)
		}
		n := v.root
		m := map[string]any{}
		for _, k := range strings.Split(keys, ",") {
			if k != "" || keys != "" {
				m[k] = nil
			}
		}
		all := true
		for k := range m {
			all = all && n.declared(k)
		}
		got := n.onlyDeclared(m)
		if got && !all || all && !got && len(n.propNames) <= 8 {
			t.Fatalf("onlyDeclared(%q) = %v, every key declared %v (%d properties)", keys, got, all, len(n.propNames))
		}
	})
}
