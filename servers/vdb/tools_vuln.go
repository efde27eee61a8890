package vdb

import (
	"context"
	"net/url"
	"strconv"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/argschema"
)

// Filters narrows a vulnerability's packages or products.
type Filters struct {
	Ecosystem   string `json:"ecosystem,omitempty" jsonschema:"package ecosystem, e.g. npm, pypi, maven"`
	PackageName string `json:"packageName,omitempty" jsonschema:"package name"`
	Vendor      string `json:"vendor,omitempty" jsonschema:"vendor"`
	Product     string `json:"product,omitempty" jsonschema:"product"`
	Distro      string `json:"distro,omitempty" jsonschema:"Linux distribution"`
	Purl        string `json:"purl,omitempty" jsonschema:"package URL (purl)"`
}

func (f Filters) query() url.Values {
	return set(url.Values{}, "ecosystem", f.Ecosystem, "packageName", f.PackageName, "vendor", f.Vendor,
		"product", f.Product, "distro", f.Distro, "purl", f.Purl)
}

type (
	vulnArgs struct {
		ID      string `json:"id" jsonschema:"the vulnerability's identifier, e.g. CVE-2024-3094 or GHSA-…"`
		Detail  string `json:"detail,omitempty" jsonschema:"summary (default, about 10 KB), full (every field, long lists cut) or raw (the record's JSON text, cut at 64 KiB)"`
		Analyze bool   `json:"analyze,omitempty" jsonschema:"with summary: add an AI interpretation (when the server has a model endpoint), marked as derived"`
	}
	idArgs struct {
		ID string `json:"id" jsonschema:"the vulnerability's identifier, e.g. CVE-2024-3094"`
	}
	timelineArgs struct {
		ID          string `json:"id" jsonschema:"the vulnerability's identifier"`
		Include     string `json:"include,omitempty" jsonschema:"event kinds to include, comma-separated"`
		Exclude     string `json:"exclude,omitempty" jsonschema:"event kinds to exclude, comma-separated"`
		Dates       string `json:"dates,omitempty" jsonschema:"a date range"`
		ScoresLimit int    `json:"scoresLimit,omitempty" jsonschema:"the most score events to return"`
	}
	affectedArgs struct {
		ID string `json:"id" jsonschema:"the vulnerability's identifier"`
		Filters
		Page
	}
	fixesArgs struct {
		ID   string `json:"id" jsonschema:"the vulnerability's identifier"`
		View string `json:"view,omitempty" jsonschema:"merged (default), registry, distributions or source"`
		Filters
		Page
	}
	remediationArgs struct {
		ID string `json:"id" jsonschema:"the vulnerability's identifier"`
		Filters
		CurrentVersion string `json:"currentVersion,omitempty" jsonschema:"the version in use"`
		PackageManager string `json:"packageManager,omitempty" jsonschema:"the package manager in use"`
		ContainerImage string `json:"containerImage,omitempty" jsonschema:"the container image in use"`
		OS             string `json:"os,omitempty" jsonschema:"the operating system"`
		Registry       string `json:"registry,omitempty" jsonschema:"the package registry"`
	}
	scorecardArgs struct {
		ID string `json:"id,omitempty" jsonschema:"a vulnerability's identifier (its package's scorecard)"`
		Q  string `json:"q,omitempty" jsonschema:"or: a repository or package to search scorecards for"`
	}
)

var (
	detailRule = argschema.Enum([]string{"summary", "full", "raw"})
	fixViews   = map[string]string{"": "", "merged": "", "registry": "registry", "distributions": "distributions", "source": "source"}
)

// vulnTools are tools 1-10 of the reference's §10.2.
func (s *Server) vulnTools() []kernel.Tool {
	return []kernel.Tool{
		declare(s, "vdb_vuln", "Get a vulnerability record: a summary by default (identifiers, description, severity, scores, weaknesses, counts), or every field with long lists cut, or the raw JSON cut at 64 KiB. A record can exceed 2 MB; it is never passed whole.", s.vuln,
			map[string]argschema.Rule{"detail": detailRule}),
		declare(s, "vdb_timeline", "Get a vulnerability's dated events (publication, score changes, exploitation), with their sources.", s.timeline,
			map[string]argschema.Rule{"scoresLimit": argschema.Between(1, 1000)}),
		declare(s, "vdb_affected", "List the package and product ranges a vulnerability affects.", s.affected, nil),
		declare(s, "vdb_fixes", "List a vulnerability's fixes: merged, or registry versions, distribution patches or source commits.", s.fixes,
			map[string]argschema.Rule{"view": argschema.Enum([]string{"merged", "registry", "distributions", "source"})}),
		declare(s, "vdb_remediation_plan", "Get a remediation plan for a vulnerability in the caller's context (package, version, package manager, image, OS), with guidance and verification steps.", s.remediation, nil),
		declare(s, "vdb_workarounds", "Get a vulnerability's known workarounds.", s.idRoute("workarounds"), nil),
		declare(s, "vdb_advisories", "Get the advisories published about a vulnerability.", s.idRoute("advisories"), nil),
		declare(s, "vdb_cwe_guidance", "Get guidance for the weaknesses (CWEs) behind a vulnerability.", s.idRoute("cwe-guidance"), nil),
		declare(s, "vdb_scorecard", "Get the OpenSSF Scorecard of a vulnerability's project (id), or search scorecards (q).", s.scorecard, nil),
		declare(s, "vdb_kev_status", "Get whether a vulnerability is known to be exploited: membership and reasons across CISA, Vulnetix, ENISA and VulnCheck KEV lists.", s.idRoute("kev"), nil),
	}
}

func (s *Server) vuln(ctx context.Context, call *kernel.Call, in vulnArgs) (out, error) {
	if err := checkID("id", in.ID); err != nil {
		return nil, err
	}
	if in.Analyze && in.Detail != "" && in.Detail != "summary" {
		return nil, kernel.Errorf(kernel.InvalidArgument, "analyze works with detail summary only.")
	}
	f, err := s.get(ctx, call, []string{"vuln", in.ID}, nil)
	if err != nil {
		return nil, err
	}
	switch in.Detail {
	case "raw":
		res := out{"id": in.ID, "detail": "raw", "bytes": len(f.body), "truncated": len(f.body) > rawCap}
		res["raw"] = string(f.body[:min(len(f.body), rawCap)])
		return result(f, res), nil
	case "full":
		v, err := decoded(ctx, f.body, decode)
		if err != nil {
			return nil, err
		}
		return result(f, out{"id": in.ID, "detail": "full", "bytes": len(f.body), "record": compact(v, 0)}), nil
	}
	sum, err := decoded(ctx, f.body, summarize)
	if err != nil {
		return nil, err
	}
	sum["id"], sum["detail"] = in.ID, "summary"
	res := result(f, sum)
	if in.Analyze {
		res["analysis"] = s.analysis(ctx, sum)
	}
	return res, nil
}

func (s *Server) idRoute(sub string) func(ctx context.Context, call *kernel.Call, in idArgs) (out, error) {
	return func(ctx context.Context, call *kernel.Call, in idArgs) (out, error) {
		if err := checkID("id", in.ID); err != nil {
			return nil, err
		}
		return s.record(ctx, call, nil, "vuln", in.ID, sub)
	}
}

func (s *Server) timeline(ctx context.Context, call *kernel.Call, in timelineArgs) (out, error) {
	if err := checkID("id", in.ID); err != nil {
		return nil, err
	}
	q := set(url.Values{}, "include", in.Include, "exclude", in.Exclude, "dates", in.Dates)
	if in.ScoresLimit > 0 {
		q.Set("scores_limit", strconv.Itoa(in.ScoresLimit))
	}
	return s.record(ctx, call, q, "vuln", in.ID, "timeline")
}

func (s *Server) affected(ctx context.Context, call *kernel.Call, in affectedArgs) (out, error) {
	if err := checkID("id", in.ID); err != nil {
		return nil, err
	}
	return s.page(ctx, call, in.Page, in.Filters.query(), "vuln", in.ID, "affected")
}

func (s *Server) fixes(ctx context.Context, call *kernel.Call, in fixesArgs) (out, error) {
	if err := checkID("id", in.ID); err != nil {
		return nil, err
	}
	view, ok := fixViews[in.View]
	if !ok {
		return nil, kernel.Errorf(kernel.InvalidArgument, "view must be merged, registry, distributions or source.")
	}
	if view == "" {
		return s.record(ctx, call, nil, "vuln", in.ID, "fixes")
	}
	return s.page(ctx, call, in.Page, in.Filters.query(), "vuln", in.ID, "fixes", view)
}

func (s *Server) remediation(ctx context.Context, call *kernel.Call, in remediationArgs) (out, error) {
	if err := checkID("id", in.ID); err != nil {
		return nil, err
	}
	q := set(in.Filters.query(), "currentVersion", in.CurrentVersion, "packageManager", in.PackageManager,
		"containerImage", in.ContainerImage, "os", in.OS, "registry", in.Registry,
		"includeGuidance", "true", "includeVerificationSteps", "true")
	return s.record(ctx, call, q, "vuln", in.ID, "remediation-plan")
}

func (s *Server) scorecard(ctx context.Context, call *kernel.Call, in scorecardArgs) (out, error) {
	switch {
	case in.ID != "" && in.Q != "":
		return nil, kernel.Errorf(kernel.InvalidArgument, "Give id or q, not both.")
	case in.ID != "":
		if err := checkID("id", in.ID); err != nil {
			return nil, err
		}
		return s.record(ctx, call, nil, "vuln", in.ID, "scorecard")
	case in.Q != "":
		return s.record(ctx, call, url.Values{"q": {in.Q}}, "scorecard", "search")
	}
	return nil, kernel.Errorf(kernel.InvalidArgument, "Give id (a vulnerability) or q (a search).")
}
