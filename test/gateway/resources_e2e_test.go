//go:build e2e

package gatewaye2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestResourcesRelayedFromServerEverything: server-everything's resources
// and templates are listed under bulwark://every/<its URI>, a read of
// each kind (a listed resource, a template's expansion) comes back
// enveloped or typed, the resource links of get-resource-links point at
// namespaced URIs that read through the gateway, a subscription is
// accepted, and a template's variable is completed; on both protocol
// versions.
func TestResourcesRelayedFromServerEverything(t *testing.T) {
	for _, v := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(v, func(t *testing.T) { resourcesFromServerEverything(t, v) })
	}
}

func resourcesFromServerEverything(t *testing.T, version string) {
	g := startWith(t, &mcp.ClientSessionOptions{ProtocolVersion: version})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if got := g.cs.InitializeResult().ProtocolVersion; got != version {
		t.Fatalf("protocol version %s, want %s", got, version)
	}
	caps := g.cs.InitializeResult().Capabilities
	if caps.Resources == nil || !caps.Resources.ListChanged || !caps.Resources.Subscribe || caps.Completions == nil {
		t.Fatalf("capabilities: %+v", caps.Resources)
	}
	rl, err := g.cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, r := range rl.Resources {
		uris = append(uris, r.URI)
		if !strings.HasPrefix(r.URI, "bulwark://") || !strings.HasPrefix(r.Description, `[relayed from the MCP server "`) {
			t.Errorf("resource %q: %q", r.URI, r.Description)
		}
	}
	t.Logf("resources: %q", uris)
	var every []string
	for _, u := range uris {
		if strings.HasPrefix(u, "bulwark://every/") {
			every = append(every, u)
		}
	}
	if len(every) == 0 {
		t.Fatalf("no resource of server-everything among %q", uris)
	}
	read := func(uri string) *mcp.ReadResourceResult {
		t.Helper()
		res, err := g.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		if err != nil {
			t.Fatalf("%s: %v", uri, err)
		}
		for _, c := range res.Contents {
			if !strings.HasPrefix(c.URI, "bulwark://every/") {
				t.Errorf("%s: a content's URI %q", uri, c.URI)
			}
			if c.Blob == nil && !strings.HasPrefix(c.Text, `<untrusted-data source="mcp-upstream">`) {
				t.Errorf("%s: text outside the envelope: %q", uri, c.Text)
			}
		}
		return res
	}
	read(every[0])
	tl, err := g.cs.ListResourceTemplates(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var tmpl *mcp.ResourceTemplate
	for _, rt := range tl.ResourceTemplates {
		t.Logf("template %q", rt.URITemplate)
		if strings.HasPrefix(rt.URITemplate, "bulwark://every/") && strings.Count(rt.URITemplate, "{") == 1 && tmpl == nil {
			tmpl = rt
		}
	}
	if tmpl == nil {
		t.Fatal("no template of server-everything")
	}
	i, j := strings.Index(tmpl.URITemplate, "{"), strings.Index(tmpl.URITemplate, "}")
	read(tmpl.URITemplate[:i] + "1" + tmpl.URITemplate[j+1:])
	res := g.call(t, "every.get-resource-links", map[string]any{"count": 2})
	links := 0
	for _, c := range res.Content {
		if l, ok := c.(*mcp.ResourceLink); ok {
			links++
			if !strings.HasPrefix(l.URI, "bulwark://every/") {
				t.Errorf("a link not namespaced: %q", l.URI)
			}
			read(l.URI)
		}
	}
	if links == 0 {
		t.Errorf("no resource link in get-resource-links' result: %+v", res.Content)
	}
	if version < "2026-07-28" { // on 2026-07-28 a subscription is a stream that lasts (TestResourceSubscriptions)
		if err := g.cs.Subscribe(ctx, &mcp.SubscribeParams{URI: every[0]}); err != nil {
			t.Errorf("subscribe: %v", err)
		}
	}
	{
		name := tmpl.URITemplate[i+1 : j]
		c, err := g.cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/resource", URI: tmpl.URITemplate},
			Argument: mcp.CompleteParamsArgument{Name: strings.TrimLeft(name, "+#./;?&"), Value: "1"}})
		if err != nil {
			t.Errorf("complete: %v", err)
		} else {
			t.Logf("completion of %s: %q", name, c.Completion.Values)
		}
	}
}

// TestTaskOnlyToolIsHiddenFromA2026ClientOfServerEverything:
// server-everything's simulate-research-query runs only as a task
// (execution.taskSupport "required"); the gateway relays its tasks to
// 2025-11-25 clients (ts-gateway.mjs runs it as a task), and a 2026-07-28
// client (the go-sdk's), whose protocol has no tasks, neither sees the
// tool nor the tasks capability; the instructions name it as listed only
// to 2025-11-25 clients.
func TestTaskOnlyToolIsHiddenFromA2026ClientOfServerEverything(t *testing.T) {
	cs, _ := startEverything(t, false)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if ins := cs.InitializeResult().Instructions; !strings.Contains(ins, `Its tools that can only run as tasks are listed only to clients of MCP 2025-11-25, whose protocol has tasks: "simulate-research-query".`) {
		t.Errorf("instructions: %s", ins)
	}
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("the go-sdk client negotiated %s", v)
	}
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range res.Tools {
		if tool.Name == "every.simulate-research-query" {
			t.Error("a tool that runs only as a task is listed to a 2026-07-28 client")
		}
	}
}
