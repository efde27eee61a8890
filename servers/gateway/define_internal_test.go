package gateway

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
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
