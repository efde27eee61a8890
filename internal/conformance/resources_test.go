package conformance

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestReadTemplate(t *testing.T) {
	for _, tc := range []struct {
		uri, id string // id "" means not found
	}{
		{"test://template/123/data", "123"},
		{`test://template/a"b/data`, `a"b`},
		{"test://template//data", ""},
		{"test://template/1/2/data", ""},
		{"test://template/123", ""},
		{"test://other/123/data", ""},
	} {
		res, err := readTemplate(context.Background(), &mcp.ReadResourceRequest{Params: &mcp.ReadResourceParams{URI: tc.uri}})
		if tc.id == "" {
			if err == nil {
				t.Errorf("%s: want not found, got %+v", tc.uri, res)
			}
			continue
		}
		var d templateData
		if err != nil || json.Unmarshal([]byte(res.Contents[0].Text), &d) != nil || d.ID != tc.id || !d.TemplateTest {
			t.Errorf("%s: %v %+v", tc.uri, err, res)
		}
	}
}

// FuzzReadTemplate: any URI is either refused or answered with valid JSON
// naming the id between the template's fixed parts.
func FuzzReadTemplate(f *testing.F) {
	f.Add("test://template/123/data")
	f.Add("test://template/\x00\"\\/data")
	f.Add("test://template//data")
	f.Fuzz(func(t *testing.T, uri string) {
		res, err := readTemplate(context.Background(), &mcp.ReadResourceRequest{Params: &mcp.ReadResourceParams{URI: uri}})
		if err != nil {
			return
		}
		var d templateData
		if err := json.Unmarshal([]byte(res.Contents[0].Text), &d); err != nil {
			t.Fatalf("%q: invalid JSON %q: %v", uri, res.Contents[0].Text, err)
		}
		if !strings.HasPrefix(uri, "test://template/") || !strings.HasSuffix(uri, "/data") || d.ID == "" || strings.Contains(d.ID, "/") {
			t.Fatalf("%q: answered with id %q", uri, d.ID)
		}
	})
}
