package vdb

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/argschema"
)

type (
	packageSearchArgs struct {
		Q         string `json:"q" jsonschema:"the package name or text to search for"`
		Ecosystem string `json:"ecosystem,omitempty" jsonschema:"package ecosystem"`
		Page
	}
	packageArgs struct {
		Ecosystem string `json:"ecosystem" jsonschema:"package ecosystem, e.g. npm, pypi, maven"`
		Name      string `json:"name" jsonschema:"the package name (maven: the artifact)"`
		Group     string `json:"group,omitempty" jsonschema:"maven: the group id"`
		Versions  bool   `json:"versions,omitempty" jsonschema:"list the package's versions instead"`
	}
	packageVulnsArgs struct {
		Package string `json:"package" jsonschema:"the package name"`
		Page
	}
	productArgs struct {
		Name      string `json:"name" jsonschema:"the product name"`
		Version   string `json:"version,omitempty" jsonschema:"a product version"`
		Ecosystem string `json:"ecosystem,omitempty" jsonschema:"with version: an ecosystem"`
		Page
	}
	eolArgs struct {
		Product   string `json:"product,omitempty" jsonschema:"a product, e.g. nodejs"`
		Release   string `json:"release,omitempty" jsonschema:"with product: a release, e.g. 18"`
		Ecosystem string `json:"ecosystem,omitempty" jsonschema:"or: a package ecosystem"`
		Package   string `json:"package,omitempty" jsonschema:"with ecosystem: the package"`
		Version   string `json:"version,omitempty" jsonschema:"with ecosystem and package: the version"`
	}
	identifiersArgs struct {
		Source string `json:"source,omitempty" jsonschema:"identifiers (default) or gcve"`
		Prefix string `json:"prefix,omitempty" jsonschema:"identifiers: an identifier prefix"`
		Year   int    `json:"year,omitempty" jsonschema:"with month: the year"`
		Month  int    `json:"month,omitempty" jsonschema:"with year: the month, 1-12; never a future UTC month"`
		Start  string `json:"start,omitempty" jsonschema:"gcve: range start date"`
		End    string `json:"end,omitempty" jsonschema:"gcve: range end date"`
		Page
	}
	catalogArgs struct {
		Kind string `json:"kind" jsonschema:"ecosystems, sources, metric-types, exploit-sources, exploit-types, fix-distributions or summary"`
	}
	trendsArgs struct {
		Feed   string `json:"feed" jsonschema:"vendor, exploit, msrc, ai-discoveries, ai-assisted-exploits, ai-in-wild-exploitations or ai-generated-malware"`
		Vendor string `json:"vendor,omitempty" jsonschema:"vendor trends: the vendor"`
		Year   int    `json:"year,omitempty" jsonschema:"vendor trends: the year"`
		Date   string `json:"date,omitempty" jsonschema:"msrc: one Patch Tuesday's date (YYYY-MM-DD); omit for the list"`
	}
)

var (
	catalogKinds = []string{"ecosystems", "sources", "metric-types", "exploit-sources", "exploit-types", "fix-distributions", "summary"}
	trendFeeds   = map[string][]string{"vendor": {"vendor-trends"}, "exploit": {"exploit-trends"}, "msrc": {"msrc", "patch-tuesdays"},
		"ai-discoveries": {"ai-discoveries"}, "ai-assisted-exploits": {"ai-assisted-exploits"},
		"ai-in-wild-exploitations": {"ai-in-wild-exploitations"}, "ai-generated-malware": {"ai-generated-malware"}}
)

// catalogTools are tools 20-27 of the reference's §10.2.
func (s *Server) catalogTools() []kernel.Tool {
	eco := map[string]argschema.Rule{"ecosystem": argschema.Enum(ecosystems)}
	return []kernel.Tool{
		declare(s, "vdb_package_search", "Search packages by name or text, optionally in one ecosystem.", s.packageSearch,
			map[string]argschema.Rule{"q": argschema.MinLen(1)}),
		declare(s, "vdb_package", "Get a package's vulnerability overview, or its versions. An npm scoped name is @scope/name; a Go module or a Composer name keeps its slashes.", s.pkg, eco),
		declare(s, "vdb_package_vulns", "List the vulnerabilities of a package.", s.packageVulns, nil),
		declare(s, "vdb_product", "Get a product's vulnerabilities, optionally for one version (and ecosystem).", s.product, eco),
		declare(s, "vdb_eol", "Get end-of-life status: of a product (and release), or of a package version.", s.eol, eco),
		declare(s, "vdb_identifiers", "List vulnerability identifiers or GCVE issuances, by prefix, month or date range.", s.identifiers,
			map[string]argschema.Rule{"source": argschema.Enum([]string{"identifiers", "gcve"}), "year": argschema.Between(1999, 2100), "month": argschema.Between(1, 12)}),
		declare(s, "vdb_catalog", "Get one of the VDB's enumerations: ecosystems, sources, metric types, exploit sources and types, fix distributions, or the database summary.", s.catalog,
			map[string]argschema.Rule{"kind": argschema.Enum(catalogKinds)}),
		declare(s, "vdb_trends", "Get a trend feed: vendor or exploit trends, Microsoft Patch Tuesdays, or the AI-related exploit and malware feeds.", s.trends,
			map[string]argschema.Rule{"feed": argschema.Enum(mapKeys(trendFeeds)), "year": argschema.Between(1999, 2100),
				"date": argschema.Pattern(`^[0-9]{4}-[0-9]{2}-[0-9]{2}$`)}),
	}
}

func mapKeys(m map[string][]string) []string {
	return []string{"vendor", "exploit", "msrc", "ai-discoveries", "ai-assisted-exploits", "ai-in-wild-exploitations", "ai-generated-malware"}
}

func (s *Server) packageSearch(ctx context.Context, call *kernel.Call, in packageSearchArgs) (out, error) {
	if strings.TrimSpace(in.Q) == "" {
		return nil, kernel.Errorf(kernel.InvalidArgument, "q must not be empty.")
	}
	return s.page(ctx, call, in.Page, set(url.Values{}, "q", in.Q, "ecosystem", in.Ecosystem), "packages", "search")
}

func (s *Server) pkg(ctx context.Context, call *kernel.Call, in packageArgs) (out, error) {
	if err := checkEcosystem("ecosystem", in.Ecosystem); err != nil {
		return nil, err
	}
	if in.Group != "" {
		if err := checkSegment("group", in.Group, groupGrammar); err != nil {
			return nil, err
		}
		if err := checkSegment("name", in.Name, tokenGrammar); err != nil {
			return nil, err
		}
		if in.Versions {
			return nil, kernel.Errorf(kernel.InvalidArgument, "versions is not available with group.")
		}
		return s.record(ctx, call, nil, in.Ecosystem, in.Group, in.Name)
	}
	segs := []string{in.Ecosystem}
	if in.Ecosystem == "npm" {
		parts, err := packageParts("name", in.Ecosystem, in.Name) // @scope/name: two segments
		if err != nil {
			return nil, err
		}
		segs = append(segs, parts...)
	} else {
		name, err := packageSegment("name", in.Ecosystem, in.Name)
		if err != nil {
			return nil, err
		}
		segs = append(segs, name)
	}
	if in.Versions {
		segs = append(segs, "versions")
	}
	return s.record(ctx, call, nil, segs...)
}

func (s *Server) packageVulns(ctx context.Context, call *kernel.Call, in packageVulnsArgs) (out, error) {
	if err := checkSegment("package", in.Package, tokenGrammar); err != nil {
		return nil, err
	}
	return s.page(ctx, call, in.Page, nil, in.Package, "vulns")
}

func (s *Server) product(ctx context.Context, call *kernel.Call, in productArgs) (out, error) {
	if err := checkSegment("name", in.Name, tokenGrammar); err != nil {
		return nil, err
	}
	if in.Version == "" {
		if in.Ecosystem != "" {
			return nil, kernel.Errorf(kernel.InvalidArgument, "ecosystem needs version.")
		}
		return s.page(ctx, call, in.Page, nil, "product", in.Name)
	}
	if err := checkSegment("version", in.Version, tokenGrammar); err != nil {
		return nil, err
	}
	if in.Ecosystem == "" {
		return s.record(ctx, call, nil, "product", in.Name, in.Version)
	}
	if err := checkEcosystem("ecosystem", in.Ecosystem); err != nil {
		return nil, err
	}
	return s.record(ctx, call, nil, "product", in.Name, in.Version, in.Ecosystem)
}

func (s *Server) eol(ctx context.Context, call *kernel.Call, in eolArgs) (out, error) {
	switch {
	case in.Product != "" && in.Ecosystem == "" && in.Package == "" && in.Version == "":
		if err := checkSegment("product", in.Product, tokenGrammar); err != nil {
			return nil, err
		}
		if in.Release == "" {
			return s.record(ctx, call, nil, "eol", "products", in.Product)
		}
		if err := checkSegment("release", in.Release, tokenGrammar); err != nil {
			return nil, err
		}
		return s.record(ctx, call, nil, "eol", "products", in.Product, "releases", in.Release)
	case in.Product == "" && in.Release == "" && in.Ecosystem != "":
		if err := checkEcosystem("ecosystem", in.Ecosystem); err != nil {
			return nil, err
		}
		pkg, err := packageSegment("package", in.Ecosystem, in.Package)
		if err != nil {
			return nil, err
		}
		if err := checkSegment("version", in.Version, tokenGrammar); err != nil {
			return nil, err
		}
		return s.record(ctx, call, nil, "eol", "packages", in.Ecosystem, pkg, "versions", in.Version)
	}
	return nil, kernel.Errorf(kernel.InvalidArgument, "Give product (and release), or ecosystem, package and version.")
}

func (s *Server) identifiers(ctx context.Context, call *kernel.Call, in identifiersArgs) (out, error) {
	if (in.Year == 0) != (in.Month == 0) {
		return nil, kernel.Errorf(kernel.InvalidArgument, "Give year and month together.")
	}
	if in.Year != 0 {
		now := s.now().UTC()
		if in.Year > now.Year() || in.Year == now.Year() && in.Month > int(now.Month()) {
			return nil, kernel.Errorf(kernel.InvalidArgument, "%04d-%02d is a future UTC month; the VDB has nothing there yet.", in.Year, in.Month)
		}
	}
	ym := []string{fmt.Sprint(in.Year), fmt.Sprintf("%02d", in.Month)}
	switch in.Source {
	case "", "identifiers":
		if in.Year != 0 {
			return s.page(ctx, call, in.Page, nil, append([]string{"identifiers"}, ym...)...)
		}
		return s.page(ctx, call, in.Page, set(url.Values{}, "prefix", in.Prefix), "identifiers")
	case "gcve":
		if in.Year != 0 {
			return s.page(ctx, call, in.Page, nil, append([]string{"gcve"}, ym...)...)
		}
		return s.record(ctx, call, set(url.Values{}, "start", in.Start, "end", in.End), "gcve")
	}
	return nil, kernel.Errorf(kernel.InvalidArgument, "source must be identifiers or gcve.")
}

func (s *Server) catalog(ctx context.Context, call *kernel.Call, in catalogArgs) (out, error) {
	for _, k := range catalogKinds {
		if in.Kind == k {
			return s.record(ctx, call, nil, k)
		}
	}
	return nil, kernel.Errorf(kernel.InvalidArgument, "kind must be one of %s.", strings.Join(catalogKinds, ", "))
}

func (s *Server) trends(ctx context.Context, call *kernel.Call, in trendsArgs) (out, error) {
	segs, ok := trendFeeds[in.Feed]
	if !ok {
		return nil, kernel.Errorf(kernel.InvalidArgument, "feed must be one of %s.", strings.Join(mapKeys(trendFeeds), ", "))
	}
	q := url.Values{}
	switch in.Feed {
	case "vendor":
		q = set(q, "vendor", in.Vendor)
		if in.Year != 0 {
			q.Set("year", fmt.Sprint(in.Year))
		}
	case "msrc":
		if in.Date != "" {
			if err := checkDate("date", in.Date); err != nil {
				return nil, err
			}
			segs = []string{"msrc", "patch-tuesday", in.Date}
		}
	}
	return s.record(ctx, call, q, segs...)
}

// dataTools are the 27 read-only tools, in the reference's order.
func (s *Server) dataTools() []kernel.Tool {
	return append(append(s.vulnTools(), s.threatTools()...), s.catalogTools()...)
}
