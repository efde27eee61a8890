package gateway

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func schemaOf(t *testing.T, s string) *jsonschema.Schema {
	t.Helper()
	var out jsonschema.Schema
	if err := json.Unmarshal([]byte(s), &out); err != nil {
		t.Fatal(err)
	}
	return &out
}

// A relayed schema's prose is cut at maxSchemaText, at any depth, saying
// so; what validation reads is never cut: a value that long makes the tool
// unexposable, as does a schema over maxSchemaBytes.
func TestShapeSchema(t *testing.T) {
	long := strings.Repeat("ab", maxSchemaText)
	in := `{"type":"object","description":"` + long + `","properties":{"p":{"type":"string","title":"` + long + `",` +
		`"examples":["` + long + `"],"items":{"description":"` + long + `"}}}}`
	out, err := shapeSchema(schemaOf(t, in))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(out)
	if strings.Contains(string(b), long) || strings.Count(string(b), "[cut: 1024 of 2048 characters shown]") != 4 {
		t.Fatalf("prose not cut: %.400s", b)
	}
	var props []string
	for i := range 80 {
		props = append(props, `"p`+strings.Repeat("x", i)+`":{"description":"`+strings.Repeat("d", 1000)+`"}`)
	}
	for name, bad := range map[string]string{
		"long enum":    `{"type":"object","properties":{"p":{"enum":["` + long + `"]}}}`,
		"long default": `{"type":"object","properties":{"p":{"default":"` + long + `"}}}`,
		"long pattern": `{"type":"object","properties":{"p":{"pattern":"` + long + `"}}}`,
		"long key":     `{"type":"object","properties":{"` + long + `":{}}}`,
		"over budget":  `{"type":"object","properties":{` + strings.Join(props, ",") + `}}`,
	} {
		if _, err := shapeSchema(schemaOf(t, bad)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestTaskRequired: a tool is taken as runnable only as a task exactly
// when its wire definition says execution.taskSupport "required".
func TestTaskRequired(t *testing.T) {
	for raw, want := range map[string]bool{
		`{"name":"a","execution":{"taskSupport":"required"}}`:  true,
		`{"name":"a","execution":{"taskSupport":"optional"}}`:  false,
		`{"name":"a","execution":{"taskSupport":"forbidden"}}`: false,
		`{"name":"a"}`:                        false,
		`{"name":"a","execution":"required"}`: false,
	} {
		if got := taskRequired([]byte(raw)); got != want {
			t.Errorf("%s: %v", raw, got)
		}
	}
}

// TestRelayableTemplates: a template is kept out by a deny prefix that
// covers its literal start, kept by an allow prefix below it, and one
// whose scheme is a variable is relayed (its reads decide); a template
// that is not one, or too long, is not served.
func TestRelayableTemplates(t *testing.T) {
	g := &Gateway{}
	tmpl := resourceDef{allowed: true, tmpl: &mcp.ResourceTemplate{}}
	for _, c := range []struct {
		key         string
		allow, deny []string
		want        bool
	}{
		{"file:///docs/{+name}", nil, nil, true},
		{"file:///docs/{+name}", nil, []string{"file:///docs/"}, false},
		{"file:///docs/{+name}", []string{"file:///docs/public/"}, nil, true},
		{"file:///other/{+name}", []string{"file:///docs/public/"}, nil, false},
		{"{+uri}", nil, []string{"file:///"}, true},
		{"a b:{x}", nil, nil, false},
	} {
		l := &link{u: &Upstream{AllowResources: c.allow, DenyResources: c.deny}}
		if got := g.relayable(l, c.key, tmpl); got != c.want {
			t.Errorf("%q allow %q deny %q: %v", c.key, c.allow, c.deny, got)
		}
	}
	for _, bad := range []string{"not a uri {x}", "file:///{x", "file:///" + strings.Repeat("x", 3000) + "{x}"} {
		if _, err := servedTemplate(&Upstream{Name: "u"}, &mcp.ResourceTemplate{URITemplate: bad}); err == nil {
			t.Errorf("%.40q relayed", bad)
		}
	}
}
