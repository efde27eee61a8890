package dns

// Capability is a group of tools beyond the core (Provider) that a provider
// serves by implementing the capability's interface. The server registers
// a capability's tools only for a provider that has it: a tool the
// provider's protocol cannot serve is not offered at all.
type Capability string

// The capabilities, each with its interface.
const (
	CapZones       Capability = "zones"       // ZoneManager
	CapImport      Capability = "import"      // Importer
	CapLabels      Capability = "labels"      // Labeler
	CapProtection  Capability = "protection"  // Protector
	CapComments    Capability = "comments"    // Commenter
	CapSecondaries Capability = "secondaries" // SecondaryManager
	CapActions     Capability = "actions"     // ActionLog
)

// allCapabilities is every capability, in the order Capabilities lists them.
var allCapabilities = []Capability{CapZones, CapImport, CapLabels, CapProtection, CapComments, CapSecondaries, CapActions}

// toolCapability names the capability each tool needs; a tool not listed
// is core and served by every provider.
var toolCapability = map[string]Capability{
	"create_zone":                CapZones,
	"delete_zone":                CapZones,
	"change_zone_ttl":            CapZones,
	"import_zonefile":            CapImport,
	"update_zone":                CapLabels,
	"update_rrset":               CapLabels,
	"change_zone_protection":     CapProtection,
	"change_rrset_protection":    CapProtection,
	"update_records":             CapComments,
	"change_primary_nameservers": CapSecondaries,
	"list_zone_actions":          CapActions,
	"get_zone_action":            CapActions,
}

// capable holds a provider's capability interfaces; a nil field is a
// capability the provider lacks.
type capable struct {
	zones       ZoneManager
	importer    Importer
	labels      Labeler
	protection  Protector
	comments    Commenter
	secondaries SecondaryManager
	actions     ActionLog
}

// capabilitiesOf finds p's capability interfaces by type assertion alone:
// no method of p is called, so a typed nil pointer of a provider type
// answers too.
func capabilitiesOf(p Provider) capable {
	var c capable
	c.zones, _ = p.(ZoneManager)
	c.importer, _ = p.(Importer)
	c.labels, _ = p.(Labeler)
	c.protection, _ = p.(Protector)
	c.comments, _ = p.(Commenter)
	c.secondaries, _ = p.(SecondaryManager)
	c.actions, _ = p.(ActionLog)
	return c
}

// has reports whether the provider has capability c ("" is the core).
func (c capable) has(cap Capability) bool {
	switch cap {
	case "":
		return true
	case CapZones:
		return c.zones != nil
	case CapImport:
		return c.importer != nil
	case CapLabels:
		return c.labels != nil
	case CapProtection:
		return c.protection != nil
	case CapComments:
		return c.comments != nil
	case CapSecondaries:
		return c.secondaries != nil
	case CapActions:
		return c.actions != nil
	}
	return false
}

// Capabilities lists the capabilities p implements, in a fixed order.
func Capabilities(p Provider) []Capability {
	c := capabilitiesOf(p)
	var out []Capability
	for _, cap := range allCapabilities {
		if c.has(cap) {
			out = append(out, cap)
		}
	}
	return out
}

// ServedTools names the tools a server over p registers (before read-only
// mode and the allow and deny lists), in the order Tools declares them. It
// calls no method of p: a typed nil pointer of a provider type answers
// which tools that kind of provider serves.
func ServedTools(p Provider) []string {
	s := &Server{p: p, caps: capabilitiesOf(p)}
	var names []string
	for _, t := range s.Tools() {
		names = append(names, t.Name())
	}
	return names
}

// noLabels refuses a label argument given to a provider that keeps no
// labels, rather than dropping it.
func (s *Server) noLabels(arg string, given bool) error {
	if given && s.caps.labels == nil {
		return invalid(arg, "this provider (%s) keeps no labels", s.p.Name())
	}
	return nil
}

// noComments refuses record comments given to a provider that keeps none.
func (s *Server) noComments(recs []Record) error {
	if s.caps.comments != nil {
		return nil
	}
	for i, r := range recs {
		if r.Comment != "" {
			return invalid("records", "record %d has a comment, and this provider (%s) keeps no comments", i+1, s.p.Name())
		}
	}
	return nil
}
