package taint

import "encoding/json"

// The hostile upstream's resources: one resource and one template whose
// every member is hostile, and one of each whose URI is (not relayed); a
// read answers with text and blob contents, every member hostile; a
// subscription is answered with an update of the subscribed URI and of a
// hostile one.

// Resources are the URIs the gateway relays of the hostile upstream's
// resources, namespaced, and ResourceTemplated one URI its template
// matches.
var (
	Resources         = []string{"bulwark://taint/file:///r_all"}
	ResourceTemplated = "bulwark://taint/file:///t/x"
)

func (u *upstream) resource(uri string) map[string]any {
	return map[string]any{"uri": uri, "name": u.h("Resource.name"), "title": u.h("Resource.title"), "description": u.h("Resource.description"),
		"mimeType": u.h("Resource.mimeType"), "size": 3, "annotations": u.annotations("Resource"), "_meta": u.meta("Resource._meta"),
		"icons": []any{map[string]any{"src": "https://icons.example/" + u.h("Icon.src")}}}
}

func (u *upstream) listResources() map[string]any {
	return map[string]any{"resources": []any{u.resource("file:///r_all"), u.resource("file:///" + u.h("Resource.uri"))},
		"_meta": u.meta("ListResourcesResult._meta")}
}

func (u *upstream) listResourceTemplates() map[string]any {
	tmpl := func(t string) map[string]any {
		return map[string]any{"uriTemplate": t, "name": u.h("ResourceTemplate.name"), "title": u.h("ResourceTemplate.title"),
			"description": u.h("ResourceTemplate.description"), "mimeType": u.h("ResourceTemplate.mimeType"),
			"annotations": u.annotations("ResourceTemplate"), "_meta": u.meta("ResourceTemplate._meta"),
			"icons": []any{map[string]any{"src": "https://icons.example/" + u.h("Icon.src")}}}
	}
	return map[string]any{"resourceTemplates": []any{tmpl("file:///t/{x}"), tmpl("file:///" + u.h("ResourceTemplate.uriTemplate") + "/{x}")},
		"_meta": u.meta("ListResourceTemplatesResult._meta")}
}

// readResource answers every content of every kind, the resource's own URI
// and a hostile one.
func (u *upstream) readResource(params json.RawMessage) map[string]any {
	var p struct {
		URI string `json:"uri"`
	}
	_ = json.Unmarshal(params, &p)
	var contents []any
	for _, b := range u.blocks() {
		if r, ok := b.(map[string]any)["resource"]; ok {
			contents = append(contents, r)
		}
	}
	contents = append(contents, map[string]any{"uri": p.URI, "mimeType": "text/plain", "text": u.h("TextResourceContents.text")})
	return map[string]any{"contents": contents, "_meta": u.meta("ReadResourceResult._meta")}
}

// subscribed answers a subscription, then says the resource changed, and
// a resource of a hostile URI.
func (u *upstream) subscribed(id, params json.RawMessage) {
	var p struct {
		URI string `json:"uri"`
	}
	_ = json.Unmarshal(params, &p)
	u.result(id, map[string]any{})
	for _, uri := range []string{p.URI, "file:///" + u.h("ResourceUpdatedNotificationParams.uri")} {
		u.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": map[string]any{
			"uri": uri, "_meta": u.meta("ResourceUpdatedNotificationParams._meta")}})
	}
}

// completion answers every completion with hostile values.
func (u *upstream) completion() map[string]any {
	return map[string]any{"completion": map[string]any{"values": []any{u.h("CompleteResult.completion"), "plain"}, "total": 2, "hasMore": false},
		"_meta": u.meta("CompleteResult._meta")}
}
