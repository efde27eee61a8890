package dns

import "github.com/bulwarkmcp/bulwark/kernel"

// The tools' safety policies. Every tool states all four hints (the MCP
// default of destructiveHint is true, so leaving one out would say the
// opposite of what is meant). "Destructive" means the tool may overwrite or
// remove something (labels, TTLs, records, protection); only tools that just
// add are not. "Idempotent" means a second identical call changes nothing
// more (the SOA serial, which the provider bumps on every change, aside).
// The confirmation gates follow the security page's table exactly
// (policy_test.go holds the table).

// readOnly is the policy of every read tool.
var readOnly = kernel.Policy{ReadOnly: kernel.Yes, Destructive: kernel.No, Idempotent: kernel.Yes,
	OpenWorld: kernel.Yes, Confirm: kernel.Never, Tier: kernel.Open}

// write is the policy of a tool that changes something.
func write(destructive, idempotent kernel.YesNo, gate kernel.Gate) kernel.Policy {
	return kernel.Policy{ReadOnly: kernel.No, Destructive: destructive, Idempotent: idempotent,
		OpenWorld: kernel.Yes, Confirm: gate, Tier: kernel.Open}
}

var (
	zoneTarget  = []string{"zone"}
	rrsetTarget = []string{"zone", "name", "type"}
)

// removing is the predicate of the protection tools' gates: the call turns
// protection off (or says nothing clear, which fails closed).
func removing(field string) func(args map[string]any) bool {
	return func(args map[string]any) bool {
		on, ok := args[field].(bool)
		return !ok || !on
	}
}

// Policies by tool, in one place.
var (
	deleteZonePolicy = write(kernel.Yes, kernel.Yes, kernel.Always(kernel.Bind{Target: zoneTarget}))
	importPolicy     = write(kernel.Yes, kernel.Yes, kernel.Always(kernel.Bind{Target: zoneTarget, Payload: []string{"zonefile"}}))
	nameserversPol   = write(kernel.Yes, kernel.Yes, kernel.Always(kernel.Bind{Target: zoneTarget, Payload: []string{"primary_nameservers"}}))
	zoneProtectPol   = write(kernel.Yes, kernel.Yes, kernel.When(removing("delete"), kernel.Bind{Target: zoneTarget}).Described("only when removing protection (`delete: false`)"))
	deleteRRSetPol   = write(kernel.Yes, kernel.Yes, kernel.Always(kernel.Bind{Target: rrsetTarget}))
	setRecordsPol    = write(kernel.Yes, kernel.Yes, kernel.Always(kernel.Bind{Target: rrsetTarget, Payload: []string{"records"}}))
	removeRecordsPol = write(kernel.Yes, kernel.Yes, kernel.Always(kernel.Bind{Target: rrsetTarget, Payload: []string{"records"}}))
	rrsetProtectPol  = write(kernel.Yes, kernel.Yes, kernel.When(removing("change"), kernel.Bind{Target: rrsetTarget}).Described("only when removing protection (`change: false`)"))
	createPolicy     = write(kernel.No, kernel.No, kernel.Never)   // create_zone, create_rrset, add_records
	overwritePolicy  = write(kernel.Yes, kernel.Yes, kernel.Never) // labels, TTLs, comments
)
