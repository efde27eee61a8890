package vdb

import (
	"context"
	"net/url"
	"strconv"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/argschema"
)

type (
	kevListArgs struct {
		Catalogue string `json:"catalogue,omitempty" jsonschema:"unified (default: CISA, Vulnetix, ENISA, VulnCheck) or vulnetix (Vulnetix's own list)"`
		CveID     string `json:"cveId,omitempty" jsonschema:"only this vulnerability (unified)"`
		Source    string `json:"source,omitempty" jsonschema:"only this KEV source (unified)"`
		Reason    string `json:"reason,omitempty" jsonschema:"only this listing reason"`
		Since     string `json:"since,omitempty" jsonschema:"added on or after this date (YYYY-MM-DD)"`
		Until     string `json:"until,omitempty" jsonschema:"added on or before this date (YYYY-MM-DD)"`
		Vendor    string `json:"vendor,omitempty" jsonschema:"vendor"`
		Product   string `json:"product,omitempty" jsonschema:"product"`
		Page
	}
	exploitsArgs struct {
		ID        string `json:"id,omitempty" jsonschema:"a vulnerability's identifier: its exploits"`
		ExploitID string `json:"exploitId,omitempty" jsonschema:"or: one exploit's id"`
	}
	exploitSearchArgs struct {
		Ecosystem string  `json:"ecosystem,omitempty" jsonschema:"package ecosystem"`
		Source    string  `json:"source,omitempty" jsonschema:"exploit source"`
		Severity  string  `json:"severity,omitempty" jsonschema:"severity"`
		InKev     bool    `json:"inKev,omitempty" jsonschema:"only exploits of known-exploited vulnerabilities"`
		MinEpss   float64 `json:"minEpss,omitempty" jsonschema:"the lowest EPSS score, 0-1"`
		Q         string  `json:"q,omitempty" jsonschema:"free text"`
		Sort      string  `json:"sort,omitempty" jsonschema:"sort order"`
		Page
	}
	searchByVulnArgs struct {
		ID     string `json:"id,omitempty" jsonschema:"a vulnerability's identifier; omit to search"`
		CveID  string `json:"cveId,omitempty" jsonschema:"search: this vulnerability"`
		Q      string `json:"q,omitempty" jsonschema:"search: free text"`
		Since  string `json:"since,omitempty" jsonschema:"search: on or after this date"`
		Source string `json:"source,omitempty" jsonschema:"search: this source"`
		Page
	}
	iocArgs struct {
		ID         string `json:"id,omitempty" jsonschema:"a vulnerability's identifier; omit to search"`
		CveID      string `json:"cveId,omitempty" jsonschema:"search: this vulnerability"`
		Country    string `json:"country,omitempty" jsonschema:"search: country code"`
		ASN        string `json:"asn,omitempty" jsonschema:"search: autonomous system number"`
		Behavior   string `json:"behavior,omitempty" jsonschema:"search: behaviour"`
		Reputation string `json:"reputation,omitempty" jsonschema:"search: reputation"`
		Since      string `json:"since,omitempty" jsonschema:"search: on or after this date"`
		Page
	}
	rulesArgs struct {
		Kind string `json:"kind" jsonschema:"nuclei, snort or yara"`
		searchByVulnArgs
	}
	attackArgs struct {
		ID          string `json:"id,omitempty" jsonschema:"a vulnerability's identifier; omit to search"`
		TechniqueID string `json:"techniqueId,omitempty" jsonschema:"search: ATT&CK technique, e.g. T1190"`
		Tactic      string `json:"tactic,omitempty" jsonschema:"search: tactic"`
		CveID       string `json:"cveId,omitempty" jsonschema:"search: this vulnerability"`
		Q           string `json:"q,omitempty" jsonschema:"search: free text"`
		Page
	}
	vexArgs struct {
		ID       string `json:"id,omitempty" jsonschema:"a vulnerability's identifier; omit to search"`
		Status   string `json:"status,omitempty" jsonschema:"search: VEX status"`
		Supplier string `json:"supplier,omitempty" jsonschema:"search: supplier"`
		Since    string `json:"since,omitempty" jsonschema:"search: on or after this date"`
		Page
	}
	triageArgs struct {
		MinEpss           float64 `json:"minEpss,omitempty" jsonschema:"the lowest EPSS score, 0-1"`
		MinEpssPercentile float64 `json:"minEpssPercentile,omitempty" jsonschema:"the lowest EPSS percentile, 0-1"`
		MinCvss           float64 `json:"minCvss,omitempty" jsonschema:"the lowest CVSS score, 0-10"`
		Severity          string  `json:"severity,omitempty" jsonschema:"severity"`
		InKev             bool    `json:"inKev,omitempty" jsonschema:"only known-exploited vulnerabilities"`
		Vendor            string  `json:"vendor,omitempty" jsonschema:"vendor"`
		Product           string  `json:"product,omitempty" jsonschema:"product"`
		Since             string  `json:"since,omitempty" jsonschema:"published on or after this date"`
		WindowDays        int     `json:"windowDays,omitempty" jsonschema:"published within this many days"`
		Sort              string  `json:"sort,omitempty" jsonschema:"cvss, cess, epss (needs minEpss >= 0.3 or minEpssPercentile), published or kev-due"`
		Page
	}
)

var ruleKinds = map[string][2]string{"nuclei": {"nuclei", ""}, "snort": {"snort-rules", "snort-rules"}, "yara": {"yara-rules", "yara-rules"}}

// threatTools are tools 11-19 of the reference's §10.2.
func (s *Server) threatTools() []kernel.Tool {
	score := argschema.Between(0, 1)
	return []kernel.Tool{
		declare(s, "vdb_kev_list", "List known-exploited vulnerabilities: the unified catalogue or Vulnetix's own list, filtered and paged.", s.kevList,
			map[string]argschema.Rule{"catalogue": argschema.Enum([]string{"unified", "vulnetix"})}),
		declare(s, "vdb_exploits", "Get a vulnerability's known exploits (id), or one exploit (exploitId). Proof-of-concept archives are never fetched.", s.exploits,
			map[string]argschema.Rule{"exploitId": argschema.Pattern(idPattern)}),
		declare(s, "vdb_exploit_search", "Search exploits by ecosystem, source, severity, KEV membership, EPSS or text.", s.exploitSearch,
			map[string]argschema.Rule{"minEpss": score}),
		declare(s, "vdb_iocs", "Get a vulnerability's indicators of compromise (id), or search them.", s.iocs, nil),
		declare(s, "vdb_sightings", "Get CrowdSec sightings of a vulnerability being exploited.", s.idRoute("sightings"), nil),
		declare(s, "vdb_detection_rules", "Get detection rules (nuclei, snort or yara) for a vulnerability (id), or search snort and yara rules.", s.rules,
			map[string]argschema.Rule{"kind": argschema.Enum([]string{"nuclei", "snort", "yara"})}),
		declare(s, "vdb_attack_techniques", "Get the MITRE ATT&CK techniques of a vulnerability (id), or search them.", s.attack, nil),
		declare(s, "vdb_vex", "Get VEX statements about a vulnerability (id), or search them; only your organisation's uploaded VEX documents.", s.vex, nil),
		declare(s, "vdb_triage", "List vulnerabilities worth triaging by EPSS, CESS, CVSS, severity, KEV and vendor; at least one filter.", s.triage,
			map[string]argschema.Rule{"minEpss": score, "minEpssPercentile": score, "minCvss": argschema.Between(0, 10),
				"windowDays": argschema.Between(1, 3650), "sort": argschema.Enum([]string{"cvss", "cess", "epss", "published", "kev-due"})}),
	}
}

func (s *Server) kevList(ctx context.Context, call *kernel.Call, in kevListArgs) (out, error) {
	switch in.Catalogue {
	case "vulnetix":
		return s.page(ctx, call, in.Page, set(url.Values{}, "reason", in.Reason), "vulnetix-kev")
	case "", "unified":
		q := set(url.Values{}, "cveId", in.CveID, "source", in.Source, "reason", in.Reason, "since", in.Since,
			"until", in.Until, "vendor", in.Vendor, "product", in.Product)
		return s.page(ctx, call, in.Page, q, "kev")
	}
	return nil, kernel.Errorf(kernel.InvalidArgument, "catalogue must be unified or vulnetix.")
}

func (s *Server) exploits(ctx context.Context, call *kernel.Call, in exploitsArgs) (out, error) {
	switch {
	case in.ID != "" && in.ExploitID != "":
		return nil, kernel.Errorf(kernel.InvalidArgument, "Give id or exploitId, not both.")
	case in.ID != "":
		if err := checkID("id", in.ID); err != nil {
			return nil, err
		}
		return s.record(ctx, call, nil, "vuln", in.ID, "exploits")
	case in.ExploitID != "":
		if err := checkID("exploitId", in.ExploitID); err != nil {
			return nil, err
		}
		return s.record(ctx, call, nil, "exploits", in.ExploitID)
	}
	return nil, kernel.Errorf(kernel.InvalidArgument, "Give id (a vulnerability) or exploitId.")
}

func float(v float64) string {
	if v == 0 {
		return ""
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

func flag(b bool) string {
	if b {
		return "true"
	}
	return ""
}

func (s *Server) exploitSearch(ctx context.Context, call *kernel.Call, in exploitSearchArgs) (out, error) {
	q := set(url.Values{}, "ecosystem", in.Ecosystem, "source", in.Source, "severity", in.Severity,
		"inKev", flag(in.InKev), "minEpss", float(in.MinEpss), "q", in.Q, "sort", in.Sort)
	return s.page(ctx, call, in.Page, q, "exploits")
}

// byVulnOrSearch serves the tools that read /vuln/{id}/<sub> or search /<search>.
func (s *Server) byVulnOrSearch(ctx context.Context, call *kernel.Call, id, sub, search string, pg Page, q url.Values) (out, error) {
	if id != "" {
		if err := checkID("id", id); err != nil {
			return nil, err
		}
		return s.page(ctx, call, pg, nil, "vuln", id, sub)
	}
	if search == "" {
		return nil, kernel.Errorf(kernel.InvalidArgument, "This kind has no search: give id.")
	}
	if len(q) == 0 {
		return nil, kernel.Errorf(kernel.InvalidArgument, "Give id, or at least one search filter.")
	}
	return s.page(ctx, call, pg, q, search)
}

func (s *Server) iocs(ctx context.Context, call *kernel.Call, in iocArgs) (out, error) {
	q := set(url.Values{}, "cveId", in.CveID, "country", in.Country, "asn", in.ASN, "behavior", in.Behavior,
		"reputation", in.Reputation, "since", in.Since)
	return s.byVulnOrSearch(ctx, call, in.ID, "iocs", "iocs", in.Page, q)
}

func (s *Server) rules(ctx context.Context, call *kernel.Call, in rulesArgs) (out, error) {
	k, ok := ruleKinds[in.Kind]
	if !ok {
		return nil, kernel.Errorf(kernel.InvalidArgument, "kind must be nuclei, snort or yara.")
	}
	if in.Kind == "nuclei" && in.ID != "" {
		if err := checkID("id", in.ID); err != nil {
			return nil, err
		}
		return s.record(ctx, call, nil, "vuln", in.ID, "nuclei")
	}
	q := set(url.Values{}, "cveId", in.CveID, "q", in.Q, "since", in.Since, "source", in.Source)
	return s.byVulnOrSearch(ctx, call, in.ID, k[0], k[1], in.Page, q)
}

func (s *Server) attack(ctx context.Context, call *kernel.Call, in attackArgs) (out, error) {
	q := set(url.Values{}, "techniqueId", in.TechniqueID, "tactic", in.Tactic, "cveId", in.CveID, "q", in.Q)
	return s.byVulnOrSearch(ctx, call, in.ID, "attack-techniques", "attack-techniques", in.Page, q)
}

func (s *Server) vex(ctx context.Context, call *kernel.Call, in vexArgs) (out, error) {
	q := set(url.Values{}, "status", in.Status, "supplier", in.Supplier, "since", in.Since)
	if in.ID == "" && len(q) == 0 {
		return s.page(ctx, call, in.Page, q, "vex")
	}
	return s.byVulnOrSearch(ctx, call, in.ID, "vex", "vex", in.Page, q)
}

func (s *Server) triage(ctx context.Context, call *kernel.Call, in triageArgs) (out, error) {
	q := set(url.Values{}, "minEpss", float(in.MinEpss), "minEpssPercentile", float(in.MinEpssPercentile),
		"minCvss", float(in.MinCvss), "severity", in.Severity, "inKev", flag(in.InKev), "vendor", in.Vendor,
		"product", in.Product, "since", in.Since)
	if in.WindowDays > 0 {
		q.Set("windowDays", strconv.Itoa(in.WindowDays))
	}
	if len(q) == 0 {
		return nil, kernel.Errorf(kernel.InvalidArgument, "Give at least one filter (minEpss, minCvss, severity, inKev, vendor, …).")
	}
	if in.Sort == "epss" && in.MinEpss < 0.3 && in.MinEpssPercentile == 0 {
		return nil, kernel.Errorf(kernel.InvalidArgument, "sort epss needs minEpss of at least 0.3, or minEpssPercentile.")
	}
	return s.page(ctx, call, in.Page, set(q, "sort", in.Sort), "triage")
}
