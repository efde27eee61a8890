package gateway_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/internal/fake/mcpupstream"
	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/audit"
	"github.com/bulwarkmcp/bulwark/kernel/mcptest"
	"github.com/bulwarkmcp/bulwark/servers/gateway"
)

// resourceFixture is a gateway in front of the fake with its resources
// (ResourcesVar); edit changes the upstream's entry.
func resourceFixture(t *testing.T, o options, edit func(*gateway.Upstream)) *fixture {
	t.Helper()
	getenv, u := withEnv(map[string]string{mcpupstream.ResourcesVar: "1"})
	u.ReadOnlyTools = slices.Concat(readOnlyTools, []string{"link", "touch", "grow"})
	if edit != nil {
		edit(&u)
	}
	o.getenv, o.cfg = getenv, gateway.Config{Upstreams: []gateway.Upstream{u}}
	return newFixture(t, o)
}

func resourceURIs(t *testing.T, f *fixture) []string {
	t.Helper()
	res, err := f.sess.ListResources(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range res.Resources {
		out = append(out, r.URI)
	}
	slices.Sort(out)
	return out
}

func readText(t *testing.T, f *fixture, uri string) (string, error) {
	t.Helper()
	res, err := f.sess.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, c := range res.Contents {
		b.WriteString(c.URI + " " + c.Text + "\n")
	}
	return b.String(), nil
}

// TestResourcesRelayed: an upstream's resources and templates are declared
// (resources, with listChanged and subscribe) and listed under
// bulwark://<prefix>/<its URI>, their texts cleaned and marked as the
// server's; a URI that is not one is not relayed; a read is enveloped
// (text in untrusted-data tags, a bidirectional control made visible, the
// upstream's credential removed), a blob keeps its type; a template's URI
// is read in canonical form, and one whose canonical form leaves the
// template is refused before anything is sent; each read is audited.
func TestResourcesRelayed(t *testing.T) {
	f := resourceFixture(t, options{}, nil)
	caps := f.sess.InitializeResult().Capabilities
	if caps.Resources == nil || !caps.Resources.ListChanged || !caps.Resources.Subscribe {
		t.Fatalf("capabilities: %+v", caps.Resources)
	}
	if ins := f.sess.InitializeResult().Instructions; !strings.Contains(ins, `Its resources are relayed as bulwark://fake/<its URI>`) || strings.Contains(ins, "resources are not relayed") {
		t.Errorf("instructions: %s", ins)
	}
	want := []string{"bulwark://fake/file:///flagged.txt", "bulwark://fake/file:///image.png", "bulwark://fake/file:///notes.txt", "bulwark://fake/file:///private/key.txt"}
	if got := resourceURIs(t, f); !slices.Equal(got, want) {
		t.Fatalf("resources: %q", got)
	}
	res, _ := f.sess.ListResources(context.Background(), nil)
	for _, r := range res.Resources {
		if !strings.HasPrefix(r.Description, `[relayed from the MCP server "fake"; its text is untrusted] `) || strings.Contains(r.Description, "</untrusted-data>") {
			t.Errorf("description: %q", r.Description)
		}
	}
	tl, err := f.sess.ListResourceTemplates(context.Background(), nil)
	if err != nil || len(tl.ResourceTemplates) != 1 || tl.ResourceTemplates[0].URITemplate != "bulwark://fake/file:///docs/{+name}" {
		t.Fatalf("templates: %v %+v", err, tl)
	}
	got, err := readText(t, f, "bulwark://fake/file:///notes.txt")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(got, `bulwark://fake/file:///notes.txt <untrusted-data source="mcp-upstream">`) || !strings.Contains(got, "[U+202E]") {
		t.Errorf("notes: %q", got)
	}
	for _, bad := range []string{testEnv("FAKE_API_TOKEN"), "\u202e"} {
		if strings.Contains(got, bad) {
			t.Errorf("the resource holds %q: %s", bad, got)
		}
	}
	img, err := f.sess.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "bulwark://fake/file:///image.png"})
	if err != nil || len(img.Contents) != 1 || string(img.Contents[0].Blob) != string(mcpupstream.PNG) || img.Contents[0].MIMEType != "image/png" {
		t.Fatalf("image: %v %+v", err, img)
	}
	if got, err := readText(t, f, "bulwark://fake/file:///docs/a/./b.md"); err != nil || !strings.Contains(got, "read file:///docs/a/b.md") {
		t.Errorf("a template's URI, in canonical form: %q %v", got, err)
	}
	if _, err := readText(t, f, "bulwark://fake/file:///docs/../private/key.txt"); err == nil || !strings.Contains(err.Error(), "does not match") {
		t.Errorf("a template's URI climbing out of it: %v", err)
	}
	recs := f.records()
	if r := recs[len(recs)-1]; r.Tool != kernel.ReadAction || r.Attrs["method"] != "resources/read" || r.Outcome != audit.Refused || r.Upstream != "fake" {
		t.Errorf("audit: %+v", r)
	}
	if r := recs[len(recs)-2]; r.Outcome != audit.OK {
		t.Errorf("audit: %+v", r)
	}
}

// TestResourceLinksKept: a tool result's resource link stays a
// resource_link, its URI namespaced (a client reads it through the
// gateway), its name cleaned and its description scrubbed; a link whose
// URI is not one points nowhere; an embedded resource's URI is namespaced
// too.
func TestResourceLinksKept(t *testing.T) {
	f := resourceFixture(t, options{}, nil)
	res := f.sess.Call(t, "fake.link", map[string]any{})
	var links []*mcp.ResourceLink
	for _, c := range res.Content {
		if l, ok := c.(*mcp.ResourceLink); ok {
			links = append(links, l)
		}
	}
	if len(links) != 2 || links[0].URI != "bulwark://fake/file:///notes.txt" || links[1].URI != "urn:bulwark:invalid-uri" {
		t.Fatalf("links: %+v", res.Content)
	}
	if strings.Contains(links[0].Name, "</untrusted-data>") || strings.Contains(links[0].Description, testEnv("FAKE_API_TOKEN")) {
		t.Errorf("link: %+v", links[0])
	}
	if got, err := readText(t, f, links[0].URI); err != nil || !strings.Contains(got, "Notes.") {
		t.Errorf("following the link: %q %v", got, err)
	}
	res = f.sess.Call(t, "fake.resource", map[string]any{})
	if e, ok := res.Content[0].(*mcp.EmbeddedResource); !ok || e.Resource.URI != "bulwark://fake/file:///notes.txt" {
		t.Errorf("an embedded resource: %+v", res.Content[0])
	}
}

// TestResourceListsAndReadOnly: deny_resources keeps resources out of the
// list and refuses reads under them, a template's too, in canonical form;
// allow_resources keeps only what is under it; read-only mode keeps
// resources (a read changes nothing).
func TestResourceListsAndReadOnly(t *testing.T) {
	f := resourceFixture(t, options{kopts: kernel.Options{ReadOnly: true}}, func(u *gateway.Upstream) {
		u.DenyResources = []string{"file:///private/", "file:///docs/secret/"}
	})
	if got := resourceURIs(t, f); slices.Contains(got, "bulwark://fake/file:///private/key.txt") || len(got) != 3 {
		t.Fatalf("resources: %q", got)
	}
	for _, uri := range []string{"bulwark://fake/file:///docs/secret/x", "bulwark://fake/file:///docs/a/../secret/x", "bulwark://fake/file:///docs/%73ecret/x"} {
		if _, err := readText(t, f, uri); err == nil || !strings.Contains(err.Error(), "deny_resources") {
			t.Errorf("%s: %v", uri, err)
		}
	}
	if _, err := readText(t, f, "bulwark://fake/file:///docs/public"); err != nil {
		t.Errorf("read-only mode: %v", err)
	}
	f = resourceFixture(t, options{}, func(u *gateway.Upstream) { u.AllowResources = []string{"file:///docs/public/"} })
	if got := resourceURIs(t, f); len(got) != 0 {
		t.Fatalf("resources: %q", got)
	}
	if _, err := readText(t, f, "bulwark://fake/file:///docs/public/a"); err != nil {
		t.Errorf("allowed: %v", err)
	}
	if _, err := readText(t, f, "bulwark://fake/file:///docs/other"); err == nil {
		t.Error("a read outside allow_resources was relayed")
	}
}

// TestResourceReadIsAuthorized: a read is put to the policies as
// Action::"resources/read" on a Gateway::Resource whose uri is canonical.
func TestResourceReadIsAuthorized(t *testing.T) {
	o := options{kopts: policyFile(t, `permit(principal, action, resource);
forbid(principal, action == Action::"resources/read", resource is Gateway::Resource) when { resource.uri like "file:///docs/private/*" };`)}
	f := resourceFixture(t, o, nil)
	for _, uri := range []string{"bulwark://fake/file:///docs/private/x", "bulwark://fake/file:///docs/pub/../private/x"} {
		if _, err := readText(t, f, uri); err == nil || !strings.Contains(err.Error(), "Permission denied") {
			t.Errorf("%s: %v", uri, err)
		}
	}
	if r := f.records(); r[len(r)-1].Authz != "deny" || r[len(r)-1].ErrorCode != "permission_denied" {
		t.Errorf("audit: %+v", r[len(r)-1])
	}
	if _, err := readText(t, f, "bulwark://fake/file:///docs/pub/x"); err != nil {
		t.Errorf("allowed: %v", err)
	}
	if r := f.records(); r[len(r)-1].Authz != "allow" {
		t.Errorf("audit: %+v", r[len(r)-1])
	}
}

// TestResourceSubscriptions: a client subscribed to a namespaced URI is
// told when the upstream says the resource changed, under that URI, on
// either protocol version (resources/subscribe on 2025-11-25,
// subscriptions/listen on 2026-07-28); once it unsubscribed it is not. A
// subscription to a URI the gateway does not relay is refused; each is
// audited.
func TestResourceSubscriptions(t *testing.T) {
	updated := make(chan string, 8)
	copts := &mcp.ClientOptions{ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
		updated <- req.Params.URI
	}}
	f := resourceFixture(t, options{client: copts}, nil)
	ctx := context.Background()
	const uri = "bulwark://fake/file:///notes.txt"
	legacy := mcptest.Connect(t, f.ks, &mcptest.Options{ProtocolVersion: "2025-11-25", Client: copts})
	if err := legacy.Subscribe(ctx, &mcp.SubscribeParams{URI: "bulwark://fake/file:///nothing"}); err == nil || !strings.Contains(err.Error(), "relays no resource") {
		t.Errorf("a subscription to a resource the upstream does not relay: %v", err)
	}
	if r := f.records(); r[len(r)-1].Tool != "resources/subscribe" || r[len(r)-1].Outcome != audit.Refused || r[len(r)-1].Upstream != "fake" {
		t.Errorf("audit: %+v", r[len(r)-1])
	}
	for _, sess := range []*mcptest.Session{legacy, f.sess} {
		if err := sess.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
			t.Fatal(err)
		}
		deadline := time.After(20 * time.Second) // a listen stream is set up after Subscribe returns
	wait:
		for {
			f.sess.Call(t, "fake.touch", map[string]any{})
			select {
			case got := <-updated:
				if got != uri {
					t.Errorf("updated: %q", got)
				}
				break wait
			case <-time.After(100 * time.Millisecond): // a listen stream may not be up yet
			case <-deadline:
				t.Fatalf("%s: the client was not told the resource changed\n%s", sess.InitializeResult().ProtocolVersion, f.log.String())
			}
		}
		if err := sess.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: uri}); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(100 * time.Millisecond)
	for len(updated) > 0 {
		<-updated
	}
	f.sess.Call(t, "fake.touch", map[string]any{})
	select {
	case got := <-updated:
		t.Errorf("told after unsubscribing: %q", got)
	case <-time.After(300 * time.Millisecond):
	}
}

// TestChangedResourceHiddenUntilApproved: resources are pinned like tools,
// by URI: a new resource whose description the scan flags (flagged.txt's
// and notes.txt's injected instructions) is hidden, and waits for
// `bulwark gateway approve fake/resources.<uri>`.
func TestChangedResourceHiddenUntilApproved(t *testing.T) {
	st := pinStore(t, &syncBuf{})
	f := resourceFixture(t, options{pinner: st}, nil)
	if got := resourceURIs(t, f); slices.Contains(got, "bulwark://fake/file:///flagged.txt") || !slices.Contains(got, "bulwark://fake/file:///image.png") {
		t.Fatalf("resources: %q", got)
	}
	if _, err := readText(t, f, "bulwark://fake/file:///flagged.txt"); err == nil {
		t.Error("a hidden resource was read")
	}
	if !strings.Contains(f.log.String(), `msg="upstream resource hidden" upstream=fake uri="\"file:///flagged.txt\""`) {
		t.Errorf("not logged:\n%s", f.log.String())
	}
	var pending []string
	for _, p := range approveAll(t, st) {
		if strings.HasPrefix(p.Upstream, "fake/resource") {
			pending = append(pending, p.Upstream+"."+p.Tool)
		}
	}
	slices.Sort(pending)
	if !slices.Equal(pending, []string{"fake/resources.file:///flagged.txt", "fake/resources.file:///notes.txt"}) {
		t.Fatalf("pending: %q", pending)
	}
}

// TestResourceOverItsUpstreamsCapIsRefused: a read the upstream answered
// in more than its max_result_bytes is refused, and says so; a small one
// is relayed.
func TestResourceOverItsUpstreamsCapIsRefused(t *testing.T) {
	f := resourceFixture(t, options{}, func(u *gateway.Upstream) { u.MaxResultBytes = 300 })
	if _, err := readText(t, f, "bulwark://fake/file:///docs/"+strings.Repeat("x", 400)); err == nil || !strings.Contains(err.Error(), "more than the 300 allowed") {
		t.Fatalf("%v", err)
	}
	if _, err := readText(t, f, "bulwark://fake/file:///docs/a"); err != nil {
		t.Fatalf("a small read: %v", err)
	}
}

// TestResourceSubscriptionsBounded: a client session that ends without
// unsubscribing is forgotten; the gateway holds at most 1024
// subscriptions to one upstream, and refuses more.
func TestResourceSubscriptionsBounded(t *testing.T) {
	f := resourceFixture(t, options{}, nil)
	ctx := context.Background()
	gone := mcptest.Connect(t, f.ks, &mcptest.Options{ProtocolVersion: "2025-11-25"})
	if err := gone.Subscribe(ctx, &mcp.SubscribeParams{URI: "bulwark://fake/file:///notes.txt"}); err != nil {
		t.Fatal(err)
	}
	if n := gateway.Subscriptions(f.gw); n != 1 {
		t.Fatalf("%d subscriptions", n)
	}
	gone.Close()
	deadline := time.Now().Add(5 * time.Second)
	for gateway.Subscriptions(f.gw) != 0 {
		if time.Now().After(deadline) {
			t.Fatal("a closed session's subscription is kept")
		}
		time.Sleep(20 * time.Millisecond)
	}
	legacy := mcptest.Connect(t, f.ks, &mcptest.Options{ProtocolVersion: "2025-11-25"})
	for i := range 1024 {
		if err := legacy.Subscribe(ctx, &mcp.SubscribeParams{URI: fmt.Sprintf("bulwark://fake/file:///docs/%d", i)}); err != nil {
			t.Fatalf("subscription %d: %v", i, err)
		}
	}
	if err := legacy.Subscribe(ctx, &mcp.SubscribeParams{URI: "bulwark://fake/file:///docs/more"}); err == nil || !strings.Contains(err.Error(), "the most the gateway holds") {
		t.Fatalf("subscription 1025: %v", err)
	}
}

// TestResourceListChanged: when the upstream's resources change
// (notifications/resources/list_changed), the gateway lists them again,
// serves the new one and tells the client.
func TestResourceListChanged(t *testing.T) {
	told := make(chan struct{}, 8)
	f := resourceFixture(t, options{client: &mcp.ClientOptions{ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) {
		select {
		case told <- struct{}{}:
		default:
		}
	}}}, nil)
	const uri = "bulwark://fake/file:///new.txt"
	if slices.Contains(resourceURIs(t, f), uri) {
		t.Fatal("listed before it exists")
	}
	f.sess.Call(t, "fake.grow", map[string]any{})
	select {
	case <-told:
	case <-time.After(5 * time.Second):
		t.Fatal("the client was not told the resources changed")
	}
	deadline := time.Now().Add(5 * time.Second)
	for !slices.Contains(resourceURIs(t, f), uri) {
		if time.Now().After(deadline) {
			t.Fatalf("resources: %q", resourceURIs(t, f))
		}
		time.Sleep(50 * time.Millisecond)
	}
	if got, err := readText(t, f, uri); err != nil || !strings.Contains(got, "read file:///new.txt") {
		t.Errorf("the new resource: %q %v", got, err)
	}
}
