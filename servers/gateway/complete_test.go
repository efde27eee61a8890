package gateway_test

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/kernel/audit"
)

// TestCompletionsRelayed: completion/complete is declared when an
// upstream offers it, and relayed for a relayed prompt's declared
// argument and a relayed template's variable, under the upstream's own
// names; the answer keeps at most 100 values, each cleaned (an injected
// instruction's envelope tag and a bidirectional control neutralized, the
// upstream's credential removed) and cut at 1024 bytes, and says there
// are more; a reference to something not relayed, an argument the prompt
// does not declare or a variable the template lacks, and an oversized
// value are refused before anything is sent; each is audited.
func TestCompletionsRelayed(t *testing.T) {
	f := resourceFixture(t, options{}, nil)
	if f.sess.InitializeResult().Capabilities.Completions == nil {
		t.Fatal("completions not declared")
	}
	ctx := context.Background()
	res, err := f.sess.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "fake.review"},
		Argument: mcp.CompleteParamsArgument{Name: "style", Value: "go"}, Context: &mcp.CompleteContext{Arguments: map[string]string{"code": "x"}}})
	if err != nil {
		t.Fatal(err)
	}
	c := res.Completion
	if len(c.Values) != 100 || !c.HasMore || c.Total != 150 || len(c.Values[1]) > 1100 {
		t.Fatalf("completion: %d values, hasMore %v, total %d, second %d bytes", len(c.Values), c.HasMore, c.Total, len(c.Values[1]))
	}
	if v := c.Values[0]; strings.Contains(v, "</untrusted-data>") || strings.Contains(v, "\u202e") || strings.Contains(v, testEnv("FAKE_API_TOKEN")) {
		t.Errorf("a value not cleaned: %q", v)
	}
	if c.Values[2] != "asked review style=go &{map[code:x]}" {
		t.Errorf("the upstream was asked: %q", c.Values[2])
	}
	res, err = f.sess.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/resource", URI: "bulwark://fake/file:///docs/{+name}"},
		Argument: mcp.CompleteParamsArgument{Name: "name", Value: "re"}})
	if err != nil || res.Completion.Values[2] != "asked file:///docs/{+name} name=re <nil>" {
		t.Fatalf("a template: %v %+v", err, res)
	}
	for _, bad := range []*mcp.CompleteParams{
		{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "fake.nothing"}, Argument: mcp.CompleteParamsArgument{Name: "a"}},
		{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "fake.review"}, Argument: mcp.CompleteParamsArgument{Name: "evil"}},
		{Ref: &mcp.CompleteReference{Type: "ref/resource", URI: "bulwark://fake/file:///docs/{+name}"}, Argument: mcp.CompleteParamsArgument{Name: "other"}},
		{Ref: &mcp.CompleteReference{Type: "ref/resource", URI: "bulwark://fake/file:///notes.txt"}, Argument: mcp.CompleteParamsArgument{Name: "name"}},
		{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "fake.review"}, Argument: mcp.CompleteParamsArgument{Name: "style", Value: strings.Repeat("x", 5000)}},
	} {
		if _, err := f.sess.Complete(ctx, bad); err == nil || !strings.Contains(err.Error(), "invalid completion request") {
			t.Errorf("%+v %+v: %v", bad.Ref, bad.Argument.Name, err)
		}
	}
	recs := f.records()
	if r := recs[len(recs)-1]; r.Tool != "completion/complete" || r.Outcome != audit.Refused {
		t.Errorf("audit: %+v", r)
	}
}
