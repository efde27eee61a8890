// Package audit records one Record per tools/call. A record says who called
// which tool, how it ended and what it cost; it never holds an argument's
// value or a credential — only a digest of the arguments, so that two records
// of the same call can be matched without revealing what was asked.
package audit

import (
	"context"
	"io"
	"sync"
	"time"
)

// Outcome is how a call ended.
type Outcome string

// Outcomes.
const (
	OK          Outcome = "ok"           // the tool ran and succeeded
	ToolError   Outcome = "tool_error"   // the tool ran and reported an error
	Refused     Outcome = "refused"      // a gate refused it (confirmation, tier, unknown credential)
	RateLimited Outcome = "rate_limited" // over the principal's limit
	Internal    Outcome = "internal"     // our own infrastructure failed
	// Forwarded: the answer to a question another replica asked went to
	// that replica, whose own record is the call's (kernel/stateroute.go).
	// The calls metric counts the call there, once, not here.
	Forwarded Outcome = "forwarded"
)

// Record is one tools/call.
type Record struct {
	Time          time.Time     `json:"time"`
	Principal     string        `json:"principal"`
	Plan          string        `json:"plan,omitempty"`
	Scheme        string        `json:"scheme,omitempty"`  // credential scheme: none, apikey, oauth
	Network       string        `json:"network,omitempty"` // the client's network (a /24 or /64), never its token
	Tool          string        `json:"tool"`
	Outcome       Outcome       `json:"outcome"`
	ErrorCode     string        `json:"error_code,omitempty"`
	ErrorID       string        `json:"error_id,omitempty"`
	Duration      time.Duration `json:"duration_ns"`
	UpstreamCalls int           `json:"upstream_calls"`
	BytesIn       int64         `json:"bytes_in"`  // arguments received
	BytesOut      int64         `json:"bytes_out"` // result sent
	// ArgsDigest is a hex SHA-256 of the canonical arguments, keyed per
	// process so that it cannot be used to guess short values offline.
	ArgsDigest string `json:"args_digest,omitempty"`
	// Authz is the authorization decision, "allow" or "deny" (empty when
	// no policy is configured or the call ended before step 12), and
	// AuthzPolicies the ids of the policies that decided.
	Authz         string   `json:"authz,omitempty"`
	AuthzPolicies []string `json:"authz_policies,omitempty"`
	// Confirm is what the confirmation gate did, when it ran and decided.
	Confirm Confirm `json:"confirm,omitempty"`
	// UpstreamRetries counts the upstream attempts after the first of a
	// request; UpstreamBytesOut and UpstreamBytesIn are the request and
	// response body bytes exchanged with upstreams (upstream.Meter).
	UpstreamRetries  int64 `json:"upstream_retries"`
	UpstreamBytesOut int64 `json:"upstream_bytes_out"`
	UpstreamBytesIn  int64 `json:"upstream_bytes_in"`
	// CacheHits counts the answers the server took from its own cache
	// instead of an upstream (kernel.Call.CacheHit).
	CacheHits int `json:"cache_hits,omitempty"`
	// Attrs are the server's own attributes of the call
	// (kernel.Call.SetAuditAttr), such as the AI enrichment's status: at
	// most MaxAttrs, each key and value at most MaxAttrLen bytes, from fixed
	// vocabularies — never an argument's value, a credential or an id.
	Attrs map[string]string `json:"attrs,omitempty"`
	// Upstream and Pin name, for a tool a gateway relays, the upstream MCP
	// server that serves it and the hash of the tool's definition it was
	// called under. Empty for a server's own tools.
	Upstream string `json:"upstream,omitempty"`
	Pin      string `json:"pin,omitempty"`
}

// Bounds of Record.Attrs: kernel.Call.SetAuditAttr drops what exceeds them.
const (
	MaxAttrs   = 16
	MaxAttrLen = 64
)

// Confirm is what the confirmation gate did with a call.
type Confirm string

// Gate decisions.
const (
	ConfirmIssued   Confirm = "issued"   // no token given: a token was issued and the call refused
	ConfirmRedeemed Confirm = "redeemed" // the token given confirmed this exact call
	ConfirmRefused  Confirm = "refused"  // the token given did not: a fresh one was issued
	// Consent by elicitation: the person is asked through the client.
	ConfirmAsked    Confirm = "elicit_asked"    // the call was answered with the question (input required)
	ConfirmElicited Confirm = "elicit_accepted" // the client answered accept for this exact call
	ConfirmDeclined Confirm = "elicit_declined" // the client answered decline or cancel: nothing ran
)

// A Sink receives records. Write must be safe for concurrent use and should
// not block the call for long.
type Sink interface {
	Write(ctx context.Context, r Record)
}

// Discard drops every record: the default sink.
var Discard Sink = discard{}

type discard struct{}

func (discard) Write(context.Context, Record) {}

// JSONLines writes one JSON object per line to w (a file, stderr).
type JSONLines struct {
	mu sync.Mutex
	w  io.Writer
}

// NewJSONLines returns a sink writing to w.
func NewJSONLines(w io.Writer) *JSONLines { return &JSONLines{w: w} }

// Write implements Sink. A record is encoded as json.Marshal encodes it
// (appendRecord), into a pooled buffer.
func (j *JSONLines) Write(_ context.Context, r Record) {
	bp := lineBufs.Get().(*[]byte)
	defer func() {
		if cap(*bp) <= maxPooledLine {
			lineBufs.Put(bp)
		}
	}()
	b, err := appendRecord((*bp)[:0], &r)
	*bp = b
	if err != nil {
		return
	}
	b = append(b, '\n')
	*bp = b
	j.mu.Lock()
	defer j.mu.Unlock()
	_, _ = j.w.Write(b) // an io.Writer must not keep b
}

// lineBufs holds the buffers records are encoded in; one larger than
// maxPooledLine is left to the collector.
var lineBufs = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

const maxPooledLine = 16 << 10

// Func adapts a function to a Sink.
type Func func(ctx context.Context, r Record)

// Write implements Sink.
func (f Func) Write(ctx context.Context, r Record) { f(ctx, r) }
