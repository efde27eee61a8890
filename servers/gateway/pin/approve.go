package pin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// errNotPending is returned by Approve when the definition to approve is
// no longer the one waiting: the upstream changed it again, or someone
// approved it already. Show the pending list again.
var errNotPending = errors.New("not pending")

// Pending is one definition waiting for approval.
type Pending struct {
	Upstream string
	Tool     string
	// Kind is "new", "changed" or "renamed".
	Kind string
	// Old is the pinned definition it would replace (changed) or repeat
	// under a new name (renamed, then RenameOf names it); nil if new.
	Old      *pinEntry
	RenameOf string
	// New is the last-seen definition.
	New *pinEntry
	// Changes is the field-level summary of Old to New (see Changes).
	Changes []string
}

// Pending lists the definitions waiting for approval, sorted by upstream
// and tool; upstream and tool, when not empty, select.
func (s *Store) Pending(ctx context.Context, upstream, tool string) ([]Pending, error) {
	st, err := s.st.Load(ctx)
	if err != nil {
		return nil, err
	}
	var out []Pending
	for up, u := range st.Upstreams {
		if upstream != "" && up != upstream {
			continue
		}
		for name, e := range u.Pending {
			if tool != "" && name != tool {
				continue
			}
			out = append(out, pendingOf(up, name, e, u))
		}
	}
	slices.SortFunc(out, func(a, b Pending) int {
		return strings.Compare(a.Upstream+"\x00"+a.Tool, b.Upstream+"\x00"+b.Tool)
	})
	return out, nil
}

func pendingOf(up, name string, e *pinEntry, u *upstreamPins) Pending {
	p := Pending{Upstream: up, Tool: name, Kind: "new", New: e}
	switch {
	case u.Pinned[name] != nil:
		p.Kind, p.Old = "changed", u.Pinned[name]
	case e.RenameOf != "" && u.Pinned[e.RenameOf] != nil:
		p.Kind, p.Old, p.RenameOf = "renamed", u.Pinned[e.RenameOf], e.RenameOf
	}
	if p.Old != nil {
		p.Changes = changes(p.Old.Definition, e.Definition)
	}
	return p
}

// Approve pins the pending definition of upstream's tool whose hash is
// hash — the one the person was shown — and drops it from the pending
// list. It is errNotPending when that definition is no longer pending.
func (s *Store) Approve(ctx context.Context, upstream, tool, hash string) error {
	return s.st.Update(ctx, func(st *pinState) error {
		u := st.Upstreams[upstream]
		if u == nil || u.Pending[tool] == nil || u.Pending[tool].Hash != hash {
			return fmt.Errorf("%w: upstream %q tool %s", errNotPending, upstream, quoteName(tool))
		}
		e := u.Pending[tool]
		u = st.upstream(upstream) // a file may hold "pinned": null
		delete(u.Pending, tool)
		u.Pinned[tool] = &pinEntry{Hash: e.Hash, BodyHash: e.BodyHash, Definition: e.Definition, At: s.opts.Now().UTC()}
		s.opts.Logger.Info("pin: tool approved", "upstream", upstream, "tool", cleanName(tool), "hash", hash)
		return nil
	})
}

// WriteReport writes what a person needs to approve p: what happened, the
// unified diff of the pretty-printed canonical definitions (every hidden
// character shown as its \u escape), and the scan's findings.
func WriteReport(w io.Writer, p Pending, findings []Finding) error {
	var b strings.Builder
	id := cleanName(p.Upstream + "." + p.Tool)
	switch p.Kind {
	case "changed":
		fmt.Fprintf(&b, "%s: changed since it was pinned\n", id)
	case "renamed":
		fmt.Fprintf(&b, "%s: the pinned definition of %s under a new name\n", id, quoteName(p.RenameOf))
	default:
		fmt.Fprintf(&b, "%s: new tool\n", id)
	}
	if len(p.Changes) > 0 {
		fmt.Fprintf(&b, "  changes: %s\n", strings.Join(p.Changes, ", "))
	}
	if p.Old != nil {
		fmt.Fprintf(&b, "  pinned:  sha256:%s (%s)\n", p.Old.Hash, p.Old.At.UTC().Format(time.RFC3339))
	}
	fmt.Fprintf(&b, "  seen:    sha256:%s (%s)\n", p.New.Hash, p.New.At.UTC().Format(time.RFC3339))
	newText, err := pretty(p.New.Definition)
	if err != nil {
		return err
	}
	var oldText []byte
	oldName := "/dev/null"
	if p.Old != nil {
		if oldText, err = pretty(p.Old.Definition); err != nil {
			return err
		}
		oldName = "pinned/" + cleanName(p.Upstream+"."+nameOf(p))
	}
	if oldText != nil {
		oldText = append(oldText, '\n')
	}
	b.Write(unifiedDiff(oldName, oldText, "seen/"+id, append(newText, '\n')))
	if len(findings) == 0 {
		b.WriteString("scan: no findings (a clean scan proves nothing; read the definition)\n")
	} else {
		fmt.Fprintf(&b, "scan: %d finding(s)\n", len(findings))
		for _, f := range findings {
			fmt.Fprintf(&b, "  %s\n", f)
		}
	}
	_, err = io.WriteString(w, b.String())
	return err
}

func nameOf(p Pending) string {
	if p.Kind == "renamed" {
		return p.RenameOf
	}
	return p.Tool
}

// ToolNames lists every tool name the state knows, pinned or pending, bare
// and as UPSTREAM.TOOL: the names a Scan at approval looks for.
func (s *Store) ToolNames(ctx context.Context) ([]string, error) {
	st, err := s.st.Load(ctx)
	if err != nil {
		return nil, err
	}
	var out []string
	for up, u := range st.Upstreams {
		for _, m := range []map[string]*pinEntry{u.Pinned, u.Pending} {
			for name := range m {
				out = append(out, name, up+"."+name)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}
