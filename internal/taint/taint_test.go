package taint_test

import (
	"bufio"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/bulwarkmcp/bulwark/internal/taint"
	"github.com/bulwarkmcp/bulwark/kernel/mcptest"
)

// versions are the protocol versions a client speaks to the gateway.
var versions = []string{"2025-11-25", "2026-07-28"}

// TestTaintGateway is the egress gate's proof for `bulwark gateway`: a
// hostile upstream fills every string member of every message it can send
// (fields-<version>.txt, from the MCP schema) with the marker secret — in
// each encoding of taint.Encodings — the envelope's closing tag, an
// instruction and invisible characters; clients over stdio (the fast path
// and the go-sdk's) and Streamable HTTP, in both protocol versions, list
// and call every tool; and nothing they read holds the secret in any
// decoding, an envelope tag outside an envelope, or a character cleaning
// removes. The coverage table (testdata/coverage.txt) says of every member
// of the schema whether a hostile value of it reached a client, or why not.
func TestTaintGateway(t *testing.T) {
	var mu sync.Mutex
	visited := map[string]bool{}
	t.Run("encodings", func(t *testing.T) {
		for _, enc := range taint.Run() {
			t.Run(enc.Name, func(t *testing.T) {
				t.Parallel()
				c := runEncoding(t, enc)
				mu.Lock()
				for f := range c.Visited {
					visited[f] = true
				}
				mu.Unlock()
			})
		}
	})
	checkCoverage(t, visited)
}

// runEncoding runs every client against a gateway in front of the hostile
// upstream in encoding enc, and fails on what reached a client that must
// not have.
func runEncoding(t *testing.T, enc taint.Encoding) *taint.Checker {
	var log taint.Buffer // the gateway's and the kernel's log lines and audit records
	ks := startGateway(t, enc.Name, &log)
	c := taint.NewChecker(taint.Marker)
	for _, v := range versions {
		s := taint.Session{Version: v, Options: clientOptions(), Exercise: exercise}
		taint.OverStdio(t, ks, s, false, c)
		taint.OverStdio(t, ks, s, true, c)
		taint.OverHTTP(t, ks, s, c)
	}
	taint.TasksOverStdio(t, ks, c) // 2025-11-25's tasks, which no go-sdk client speaks
	taint.TasksOverHTTP(t, ks, c)
	c.Text("log", string(log.Bytes()))
	if c.Messages < 50 {
		t.Fatalf("only %d messages read: the run did not happen", c.Messages)
	}
	taint.Report(t, enc, c)
	return c
}

// reasons say why a member of the schema was never seen by a client
// holding a hostile value. Every text or json member needs a row here or a
// visit; a row for a visited member is stale and fails.
var reasons = map[string]string{
	// the gateway's own, not the upstream's
	"CreateMessageRequest.id":                                       "the gateway's own request id: an upstream's ids never reach a client",
	"ElicitRequest.id":                                              "the gateway's own request id: an upstream's ids never reach a client",
	"JSONRPCErrorResponse.id":                                       "the client's own id, answered by the gateway",
	"CallToolResult._meta":                                          "not relayed: a result's _meta is the kernel's own",
	"CallToolResult.resultType":                                     "the gateway's own (the kernel's result type)",
	"ListToolsResult.resultType":                                    "the gateway's own (the kernel's result type)",
	"ListToolsResult._meta":                                         "not relayed: the gateway lists its tools itself",
	"ListToolsResult.nextCursor":                                    "not relayed: the gateway reads every page of an upstream's list itself",
	"Implementation.description":                                    "the gateway's own server info",
	"Implementation.icons":                                          "the gateway's own server info",
	"Implementation.name":                                           "the gateway's own server info",
	"Implementation.title":                                          "the gateway's own server info",
	"Implementation.version":                                        "the gateway's own server info",
	"Implementation.websiteUrl":                                     "the gateway's own server info",
	"ResultMetaObject.io.modelcontextprotocol/serverInfo":           "the gateway's own server info",
	"NotificationMetaObject.io.modelcontextprotocol/subscriptionId": "not relayed: a notification's _meta is the kernel's own",
	"ProgressNotificationParams._meta":                              "not relayed: the kernel writes the progress notification anew",
	"ProgressNotificationParams.progressToken":                      "the client's own token, mapped back by the gateway",
	"LoggingMessageNotificationParams._meta":                        "not relayed: the kernel writes the log notification anew",
	"LoggingMessageNotificationParams.logger":                       "not relayed: the logger is the gateway's name",
	"Error.data":                                                    "not relayed: an upstream's JSON-RPC error is answered in the gateway's words, its message enveloped",
	// tool definitions: what the kernel declares of a relayed tool
	"Tool.name":             "dropped: a name outside [A-Za-z0-9_.-] is not exposed (and is logged)",
	"Tool._meta":            "not relayed: a relayed tool is declared by the kernel (name, title, description, input schema, its own annotations)",
	"Tool.annotations":      "not relayed: the annotations come from the gateway's policy for the tool, never the upstream's",
	"ToolAnnotations.title": "not relayed: the annotations come from the gateway's policy for the tool",
	"Tool.execution":        "the gateway's own: execution.taskSupport (a closed set) to 2025-11-25 clients, nothing else of the upstream's",
	"Tool.icons":            "not relayed: icons are not relayed",
	"Tool.outputSchema":     "not relayed: a relayed tool declares no output schema",
	"Icon.mimeType":         "not relayed: icons are not relayed",
	"Icon.sizes":            "not relayed: icons are not relayed",
	"Icon.src":              "not relayed: icons are not relayed",
	// content blocks: the kernel's checks of metadata (kernel/content.go)
	"TextContent._meta":             "dropped: a text block is enveloped; its _meta and annotations are not relayed",
	"TextContent.annotations":       "dropped: a text block is enveloped; its _meta and annotations are not relayed",
	"Annotations.audience":          "dropped: an audience other than user or assistant",
	"Annotations.lastModified":      "dropped: not an RFC 3339 time",
	"AudioContent.annotations":      "only typed values pass: audience user or assistant, a priority, an RFC 3339 lastModified",
	"ImageContent.annotations":      "only typed values pass: audience user or assistant, a priority, an RFC 3339 lastModified",
	"EmbeddedResource.annotations":  "only typed values pass: audience user or assistant, a priority, an RFC 3339 lastModified",
	"AudioContent.mimeType":         "dropped: not a media type (RFC 6838), the block left out",
	"ImageContent.mimeType":         "dropped: not a media type (RFC 6838), the block left out",
	"BlobResourceContents.mimeType": "dropped: not a media type (RFC 6838)",
	"TextResourceContents.mimeType": "dropped: not a media type (RFC 6838)",
	"BlobResourceContents.uri":      "replaced: not a URI (RFC 3986)",
	"TextResourceContents.uri":      "replaced: not a URI (RFC 3986)",
	"ResourceLink.annotations":      "only typed values pass: audience user or assistant, a priority, an RFC 3339 lastModified",
	"ResourceLink.icons":            "not relayed: icons are not relayed",
	"ResourceLink.mimeType":         "dropped: not a media type (RFC 6838)",
	"ResourceLink.uri":              "replaced: not a URI (RFC 3986)",
	// questions: rebuilt by the gateway (servers/gateway/relayclean.go)
	"ElicitRequestFormParams._meta":               "not relayed: the gateway rebuilds the form",
	"ElicitRequestFormParams.task":                "not relayed: the gateway rebuilds the form",
	"ElicitRequestURLParams._meta":                "refused: a URL elicitation is not relayed",
	"ElicitRequestURLParams.elicitationId":        "refused: a URL elicitation is not relayed",
	"ElicitRequestURLParams.message":              "refused: a URL elicitation is not relayed",
	"ElicitRequestURLParams.task":                 "refused: a URL elicitation is not relayed",
	"ElicitRequestURLParams.url":                  "refused: a URL elicitation is not relayed",
	"CreateMessageRequestParams._meta":            "not relayed: the gateway rebuilds a sampling request from its text messages, system prompt, temperature and maxTokens",
	"CreateMessageRequestParams.metadata":         "not relayed: the gateway rebuilds a sampling request from its text messages, system prompt, temperature and maxTokens",
	"CreateMessageRequestParams.modelPreferences": "not relayed: the gateway rebuilds a sampling request from its text messages, system prompt, temperature and maxTokens",
	"CreateMessageRequestParams.stopSequences":    "not relayed: the gateway rebuilds a sampling request from its text messages, system prompt, temperature and maxTokens",
	"CreateMessageRequestParams.task":             "not relayed: the gateway rebuilds a sampling request from its text messages, system prompt, temperature and maxTokens",
	"CreateMessageRequestParams.toolChoice":       "not relayed: the gateway rebuilds a sampling request from its text messages, system prompt, temperature and maxTokens",
	"CreateMessageRequestParams.tools":            "not relayed: the gateway rebuilds a sampling request from its text messages, system prompt, temperature and maxTokens",
	"ModelHint.name":                              "not relayed: the gateway rebuilds a sampling request from its text messages, system prompt, temperature and maxTokens",
	"ModelPreferences.hints":                      "not relayed: the gateway rebuilds a sampling request from its text messages, system prompt, temperature and maxTokens",
	"SamplingMessage._meta":                       "not relayed: the gateway rebuilds a sampling request from its text messages, system prompt, temperature and maxTokens",
	"ToolUseContent._meta":                        "refused: a sampling request with tool use or tool results is not relayed",
	"ToolUseContent.id":                           "refused: a sampling request with tool use or tool results is not relayed",
	"ToolUseContent.input":                        "refused: a sampling request with tool use or tool results is not relayed",
	"ToolUseContent.name":                         "refused: a sampling request with tool use or tool results is not relayed",
	"ToolResultContent._meta":                     "refused: a sampling request with tool use or tool results is not relayed",
	"ToolResultContent.content":                   "refused: a sampling request with tool use or tool results is not relayed",
	"ToolResultContent.structuredContent":         "refused: a sampling request with tool use or tool results is not relayed",
	"ToolResultContent.toolUseId":                 "refused: a sampling request with tool use or tool results is not relayed",
	// prompts: declared anew by the gateway (servers/gateway/prompts.go)
	"ListPromptsResult._meta":      "not relayed: the gateway lists its prompts itself",
	"ListPromptsResult.nextCursor": "not relayed: the gateway reads every page of an upstream's list itself",
	"ListPromptsResult.resultType": "the gateway's own (the kernel's result type)",
	"Prompt.name":                  "dropped: a name outside [A-Za-z0-9_.-] is not relayed (and is logged)",
	"PromptArgument.name":          "dropped: a prompt with an argument name outside [A-Za-z0-9_.-] is not relayed (and is logged)",
	"Prompt._meta":                 "not relayed: a relayed prompt is declared anew (name, title, description, arguments)",
	"Prompt.icons":                 "not relayed: icons are not relayed",
	"GetPromptResult._meta":        "not relayed: a prompt's result is built anew (kernel.Server.ShapePrompt)",
	"GetPromptResult.resultType":   "the gateway's own (the kernel's result type)",
	// resources: declared anew by the gateway (servers/gateway/resources.go)
	"ListResourcesResult._meta":               "not relayed: the gateway lists its resources itself",
	"ListResourcesResult.nextCursor":          "not relayed: the gateway reads every page of an upstream's list itself",
	"ListResourcesResult.resultType":          "the gateway's own (the kernel's result type)",
	"ListResourceTemplatesResult._meta":       "not relayed: the gateway lists its resource templates itself",
	"ListResourceTemplatesResult.nextCursor":  "not relayed: the gateway reads every page of an upstream's list itself",
	"ListResourceTemplatesResult.resultType":  "the gateway's own (the kernel's result type)",
	"Resource._meta":                          "not relayed: a relayed resource is declared anew (URI, name, title, description, media type, size)",
	"Resource.annotations":                    "not relayed: a relayed resource is declared anew (URI, name, title, description, media type, size)",
	"Resource.icons":                          "not relayed: icons are not relayed",
	"Resource.mimeType":                       "dropped: not a media type (RFC 6838)",
	"Resource.uri":                            "dropped: a resource whose URI is not a URI (RFC 3986) is not relayed (and is logged)",
	"ResourceTemplate._meta":                  "not relayed: a relayed template is declared anew (URI template, name, title, description, media type)",
	"ResourceTemplate.annotations":            "not relayed: a relayed template is declared anew (URI template, name, title, description, media type)",
	"ResourceTemplate.icons":                  "not relayed: icons are not relayed",
	"ResourceTemplate.mimeType":               "dropped: not a media type (RFC 6838)",
	"ResourceTemplate.uriTemplate":            "dropped: a template whose literal part is not a URI (RFC 3986) is not relayed (and is logged)",
	"ReadResourceResult._meta":                "not relayed: a read's result is built anew (kernel.Server.ShapeResourceContents)",
	"ReadResourceResult.resultType":           "the gateway's own (the kernel's result type)",
	"ResourceUpdatedNotification.params":      "the gateway's own: the namespaced URI a client subscribed to, nothing else of the upstream's",
	"ResourceUpdatedNotificationParams._meta": "not relayed: the gateway writes the notification anew",
	"ResourceUpdatedNotificationParams.uri":   "dropped: only a URI a client subscribed to through the gateway is relayed, namespaced",
	// tasks (2025-11-25): rebuilt by the gateway (servers/gateway/tasks.go, kernel/tasks.go)
	"Task.taskId":                   "replaced: the gateway's own id (the upstream's prefix and 128 random bits); an upstream's ids never reach a client",
	"Task.createdAt":                "replaced: the gateway's own time of creation",
	"Task.lastUpdatedAt":            "dropped: not an RFC 3339 time between the task's creation and now (the gateway's time instead)",
	"Task.ttl":                      "the gateway's own: the client's ttl, capped",
	"CreateTaskResult._meta":        "not relayed: the gateway writes the result anew",
	"Result._meta":                  "not relayed: a task's status is written anew",
	"ListTasksResult._meta":         "not relayed: the gateway lists its own task records",
	"ListTasksResult.nextCursor":    "not relayed: the gateway lists its own task records, in one page",
	"GetTaskPayloadResult._meta":    "not relayed: a result's _meta is the kernel's own (related-task names the gateway's id)",
	"NotificationParams._meta":      "not relayed: notifications/tasks/status is not relayed (a client polls tasks/get)",
	"TaskStatusNotification.params": "not relayed: notifications/tasks/status is not relayed (a client polls tasks/get)",
	// completions: the values kept, cleaned and cut (servers/gateway/complete.go)
	"CompleteResult._meta":      "not relayed: a completion's result is built anew",
	"CompleteResult.resultType": "the gateway's own (the kernel's result type)",
}

type field struct {
	name, kind string
	targets    []string // the definitions its value is made of
}

func fields(t *testing.T, version string) []field {
	f, err := os.Open("testdata/fields-" + version + ".txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []field
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if l := sc.Text(); l != "" && l[0] != '#' {
			parts := strings.Fields(l)
			out = append(out, field{parts[0], parts[1], parts[2:]})
		}
	}
	return out
}

// reached computes which members a hostile value reached a client through:
// a member whose own token arrived, and a member made of definitions one
// of whose members (or a union's alternative's) did.
func reached(all []field, visited map[string]bool) map[string]bool {
	out := maps.Clone(visited)
	byDef := map[string][]field{}
	for _, f := range all {
		def, _, _ := strings.Cut(f.name, ".")
		byDef[def] = append(byDef[def], f)
	}
	for changed := true; changed; {
		changed = false
		for _, f := range all {
			if out[f.name] {
				continue
			}
			for _, d := range f.targets {
				if slices.ContainsFunc(byDef[d], func(g field) bool { return out[g.name] }) {
					out[f.name], changed = true, true
					break
				}
			}
		}
	}
	return out
}

func checkCoverage(t *testing.T, visited map[string]bool) {
	var table []string
	seen := map[string]bool{}
	for _, v := range versions {
		all := fields(t, v)
		got := reached(all, visited)
		for _, f := range all {
			if seen[f.name] || strings.HasSuffix(f.name, ".|") {
				continue
			}
			seen[f.name] = true
			reason, hasReason := reasons[f.name]
			status := ""
			switch {
			case visited[f.name] && hasReason:
				t.Errorf("%s reached a client, but the table says %q", f.name, reason)
				status = "visited"
			case got[f.name] && !hasReason:
				status = "visited"
			case f.kind == "typed":
				status = "typed: no free text (a number, a boolean, a constant or a closed set)"
			case hasReason:
				status = reason
			default:
				t.Errorf("%s (%s): no hostile value of it reached a client, and the table says not why", f.name, f.kind)
				status = "MISSING"
			}
			table = append(table, fmt.Sprintf("%-55s %s", f.name, status))
		}
	}
	slices.Sort(table)
	mcptest.GoldenFile(t, "testdata/coverage.txt", "# The taint harness's coverage of the MCP schema (2025-11-25 and 2026-07-28): each member a gateway\n# relays, and whether a hostile value of it reached a client (then cleaned and scrubbed), or why not.\n# Regenerate with UPDATE_GOLDEN=1 go test ./internal/taint.\n"+strings.Join(table, "\n")+"\n")
}
