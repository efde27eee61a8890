package vdb

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"

	"github.com/bulwarkmcp/bulwark/kernel"
)

// Shaping bounds: what a result keeps of an upstream answer.
const (
	maxItems     = 25   // items kept of any array inside a record
	maxStrRunes  = 2000 // runes kept of any string
	maxDepth     = 12   // nesting kept
	summaryRunes = 1000 // runes kept of a summary's description
	rawCap       = 64 << 10
)

// decode parses an upstream JSON body, numbers kept exact.
func decode(body []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, kernel.Errorf(kernel.UpstreamError, "The VDB API answered with JSON this server cannot read.").WithCause(err)
	}
	return v, nil
}

// compact bounds a decoded value for a model: arrays cut to maxItems (with
// a note of how many were left out), strings to maxStrRunes, nesting to
// maxDepth.
func compact(v any, depth int) any {
	switch t := v.(type) {
	case map[string]any:
		if depth >= maxDepth {
			return "[nested too deeply; omitted]"
		}
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[k] = compact(e, depth+1)
		}
		return out
	case []any:
		if depth >= maxDepth {
			return "[nested too deeply; omitted]"
		}
		n := min(len(t), maxItems)
		out := make([]any, 0, n+1)
		for _, e := range t[:n] {
			out = append(out, compact(e, depth+1))
		}
		if len(t) > n {
			out = append(out, "["+strconv.Itoa(len(t)-n)+" more omitted]")
		}
		return out
	case string:
		return cut(t, maxStrRunes)
	}
	return v
}

// cut keeps the first n runes of s, marking the cut.
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i, k := 0, 0
	for i = range s {
		if k == n {
			break
		}
		k++
	}
	return s[:i] + "… [cut]"
}

// itemKeys are where the VDB puts a page's items.
var itemKeys = []string{"items", "data", "results", "vulnerabilities", "records", "entries"}

// items finds a page's items in a decoded answer: a top-level array, or the
// first known list member of an object. The rest of the object is returned
// as meta.
func items(v any) ([]any, map[string]any) {
	switch t := v.(type) {
	case []any:
		return t, nil
	case map[string]any:
		for _, k := range itemKeys {
			if a, ok := t[k].([]any); ok {
				meta := make(map[string]any, len(t))
				for mk, mv := range t {
					if mk != k {
						meta[mk] = mv
					}
				}
				return a, meta
			}
		}
	}
	return nil, nil
}

// result is the common frame of every data tool's answer.
func result(f *fetched, fields map[string]any) map[string]any {
	fields["cacheScope"] = "private"
	fields["cached"] = f.cached
	return fields
}

type jsonNumber = json.Number
