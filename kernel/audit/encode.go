package audit

import (
	"encoding/json"
	"maps"
	"slices"
	"strconv"

	"github.com/bulwarkmcp/bulwark/kernel/internal/jsonscan"
)

// appendRecord appends r as json.Marshal encodes it — the same members in
// the same order, the same omissions, the same string escapes, map keys
// sorted — without encoding/json's reflection: the audit writes one record
// per call. A time encoding/json refuses (a year outside 0-9999) goes
// through json.Marshal, which fails the same way. TestAppendRecord and
// FuzzAppendRecord compare the two.
func appendRecord(b []byte, r *Record) ([]byte, error) {
	start := len(b)
	b = append(b, `{"time":"`...)
	t, err := r.Time.AppendText(b)
	if err != nil {
		v, err := json.Marshal(*r) // a copy: r itself does not escape (Record has no pointer-receiver marshaler)
		return append(b[:start], v...), err
	}
	b = append(t, '"')
	b = appendString(b, "principal", r.Principal, false)
	b = appendString(b, "plan", r.Plan, true)
	b = appendString(b, "scheme", r.Scheme, true)
	b = appendString(b, "network", r.Network, true)
	b = appendString(b, "tool", r.Tool, false)
	b = appendString(b, "outcome", string(r.Outcome), false)
	b = appendString(b, "error_code", r.ErrorCode, true)
	b = appendString(b, "error_id", r.ErrorID, true)
	b = appendInt(b, "duration_ns", int64(r.Duration), false)
	b = appendInt(b, "upstream_calls", int64(r.UpstreamCalls), false)
	b = appendInt(b, "bytes_in", r.BytesIn, false)
	b = appendInt(b, "bytes_out", r.BytesOut, false)
	b = appendString(b, "args_digest", r.ArgsDigest, true)
	b = appendString(b, "authz", r.Authz, true)
	if len(r.AuthzPolicies) > 0 {
		b = append(b, `,"authz_policies":[`...)
		for i, p := range r.AuthzPolicies {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsonscan.AppendHTMLString(b, p)
		}
		b = append(b, ']')
	}
	b = appendString(b, "confirm", string(r.Confirm), true)
	b = appendInt(b, "upstream_retries", r.UpstreamRetries, false)
	b = appendInt(b, "upstream_bytes_out", r.UpstreamBytesOut, false)
	b = appendInt(b, "upstream_bytes_in", r.UpstreamBytesIn, false)
	b = appendInt(b, "cache_hits", int64(r.CacheHits), true)
	if len(r.Attrs) > 0 {
		b = append(b, `,"attrs":{`...)
		for i, k := range slices.Sorted(maps.Keys(r.Attrs)) {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsonscan.AppendHTMLString(b, k)
			b = append(b, ':')
			b = jsonscan.AppendHTMLString(b, r.Attrs[k])
		}
		b = append(b, '}')
	}
	b = appendString(b, "upstream", r.Upstream, true)
	b = appendString(b, "pin", r.Pin, true)
	return append(b, '}'), nil
}

// appendString appends ,"name":"v" (nothing when omitEmpty and v is empty).
// name needs no escaping.
func appendString(b []byte, name, v string, omitEmpty bool) []byte {
	if omitEmpty && v == "" {
		return b
	}
	b = append(b, ',', '"')
	b = append(b, name...)
	b = append(b, '"', ':')
	return jsonscan.AppendHTMLString(b, v)
}

// appendInt appends ,"name":v (nothing when omitEmpty and v is 0).
func appendInt(b []byte, name string, v int64, omitEmpty bool) []byte {
	if omitEmpty && v == 0 {
		return b
	}
	b = append(b, ',', '"')
	b = append(b, name...)
	b = append(b, '"', ':')
	return strconv.AppendInt(b, v, 10)
}
