package vdb

import (
	"context"

	"github.com/bulwarkmcp/bulwark/kernel"
)

// The security page's analytics are the kernel's audit record, one per tool
// call (tool, plan, outcome, latency, upstream calls, retries and bytes,
// cache hits; never the credential, the organisation id or an argument).
// vdb adds these attributes (audit.Record.Attrs), each from a fixed
// vocabulary.
const (
	attrScheme  = "credential_scheme" // apikey or bearer: how the upstream credential is sent
	attrVDBPlan = "vdb_plan"          // the Vulnetix plan the API reported (X-VDB-Plan)
	attrAI      = "ai"                // off, ok or failed: the AI enrichment's status
)

// vdbPlans are the X-VDB-Plan values recorded; anything else is dropped.
var vdbPlans = map[string]bool{"community": true, "pro": true, "teams": true, "enterprise": true}

func notePlan(call *kernel.Call, plan string) {
	if vdbPlans[plan] {
		call.SetAuditAttr(attrVDBPlan, plan)
	}
}

// noteAI records the enrichment's status on the call ctx belongs to.
func noteAI(ctx context.Context, status string) {
	if call := kernel.CallFrom(ctx); call != nil {
		call.SetAuditAttr(attrAI, status)
	}
}
