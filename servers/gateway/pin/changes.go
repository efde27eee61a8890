package pin

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/bulwarkmcp/bulwark/kernel/untrusted"
)

// maxChanges is how many field-level changes a summary names.
const maxChanges = 8

// changes summarizes, field by field, how the canonical definition next
// differs from old: "description changed", "inputSchema.properties.path
// added", "annotations.destructiveHint removed". Arrays are compared
// whole ("inputSchema.required changed"). Member names come from the
// upstream: they are cleaned (untrusted.CleanString), cut and quoted when
// they are not plain identifiers. At most maxChanges are named, then how
// many more there are.
func changes(old, next []byte) []string {
	var a, b any
	if json.Unmarshal(old, &a) != nil || json.Unmarshal(next, &b) != nil {
		return []string{"definition changed"}
	}
	var out []string
	diffValue(&out, "", a, b)
	if len(out) == 0 && !bytes.Equal(old, next) {
		out = append(out, "definition changed")
	}
	if len(out) > maxChanges {
		out = append(out[:maxChanges], fmt.Sprintf("and %d more changes", len(out)-maxChanges))
	}
	return out
}

// diffValue appends the changes from a to b at path (dotted).
func diffValue(out *[]string, path string, a, b any) {
	ao, aok := a.(map[string]any)
	bo, bok := b.(map[string]any)
	if !aok || !bok {
		if !equalJSON(a, b) {
			*out = append(*out, label(path)+" changed")
		}
		return
	}
	keys := make([]string, 0, len(ao)+len(bo))
	for k := range ao {
		keys = append(keys, k)
	}
	for k := range bo {
		if _, ok := ao[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		av, inA := ao[k]
		bv, inB := bo[k]
		p := join(path, k)
		switch {
		case !inA:
			*out = append(*out, p+" added")
		case !inB:
			*out = append(*out, p+" removed")
		default:
			diffValue(out, p, av, bv)
		}
	}
}

func label(path string) string {
	if path == "" {
		return "definition"
	}
	return path
}

func equalJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

// join appends member k to a dotted path, quoting k unless it is a plain
// identifier of at most 64 bytes.
func join(path, k string) string {
	seg := k
	if !plainName(k) {
		k = untrusted.CleanString(k)
		if len(k) > 64 {
			k = strings.ToValidUTF8(k[:64], "") + "…"
		}
		seg = strconv.Quote(k)
	}
	if path == "" {
		return seg
	}
	return path + "." + seg
}

func plainName(k string) bool {
	if k == "" || len(k) > 64 {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '$') {
			return false
		}
	}
	return true
}
