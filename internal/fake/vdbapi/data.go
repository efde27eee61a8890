package vdbapi

import (
	"strings"
	"time"
)

// Seeded vulnerability ids.
const (
	// Log4Shell has aliases, KEV membership, exploits with PoCs, Maven
	// packages and fixes: the "rich" record.
	Log4Shell = "CVE-2021-44228"
	// XZBackdoor is a Debian/RPM record with distro fixes.
	XZBackdoor = "CVE-2024-3094"
	// Spring4Shell is a second Maven record, not in KEV.
	Spring4Shell = "CVE-2022-22965"
	// LargeVulnID is a generated record of LargeVulnSize bytes (over 2 MB,
	// under 3 MiB): "a raw record can exceed 2 MB".
	LargeVulnID   = "CVE-2099-0002"
	LargeVulnSize = 2_200_000
	// HugeVulnID is a generated record of HugeVulnSize bytes, over the
	// 3 MiB buffering line.
	HugeVulnID   = "CVE-2099-0003"
	HugeVulnSize = 4 << 20
)

// Affected is one affected range of a package.
type Affected struct {
	Ecosystem  string `json:"ecosystem"`
	Package    string `json:"packageName"`
	Introduced string `json:"introduced"`
	Fixed      string `json:"fixed,omitempty"`
	PURL       string `json:"purl,omitempty"`
}

// Exploit is one public exploit of a vulnerability.
type Exploit struct {
	ID          string `json:"id"` // a UUID
	Source      string `json:"source"`
	URL         string `json:"url"`
	Description string `json:"description"`
	Maturity    string `json:"maturity"`
	PoC         string `json:"-"` // served by /exploits/{id}/poc as an archive
}

// Vuln is the fake's model of a vulnerability; every /vuln/{id}/… route
// is rendered from it. Prose fields (Title, Description, Workaround,
// Exploits[].Description and PoC) get the SetInjection text.
type Vuln struct {
	ID             string
	Aliases        []string
	Title          string
	Description    string
	Published      time.Time
	Modified       time.Time
	Severity       string
	CVSS           float64
	Vector         string
	EPSS           float64
	EPSSPercentile float64
	CWEs           []string
	KEV            bool
	KEVDueDate     string
	Vendor         string
	Product        string
	Affected       []Affected
	Exploits       []Exploit
	Workaround     string
}

// AddVuln adds (or replaces) a record. Ids are matched case-insensitively.
func (s *Server) AddVuln(v Vuln) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := v
	s.vulns[strings.ToUpper(v.ID)] = &c
}

// AddBigVuln adds a generated record of size bytes (at least about 2 KiB),
// streamed from /vuln/{id} and never held in memory whole: the summary
// fields first, then a long "affected" array.
func (s *Server) AddBigVuln(id string, size int) {
	s.AddVuln(Vuln{ID: id, Title: "Generated large record", Description: "A generated record of " +
		"many affected ranges, for size limits.", Published: day(2099, 1, 2), Modified: day(2099, 1, 3),
		Severity: "MEDIUM", CVSS: 5.3, EPSS: 0.01, EPSSPercentile: 0.2, CWEs: []string{"CWE-400"},
		Affected: []Affected{{Ecosystem: "npm", Package: "left-pad-generated", Introduced: "0"}}})
	s.mu.Lock()
	defer s.mu.Unlock()
	s.big[strings.ToUpper(id)] = size
}

// vuln returns a copy of a record with the injection applied.
func (s *Server) vuln(id string) (*Vuln, int, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.vulns[strings.ToUpper(id)]
	if v == nil {
		return nil, 0, false
	}
	c := *v
	c.Affected = append([]Affected(nil), v.Affected...)
	c.Exploits = append([]Exploit(nil), v.Exploits...)
	if inj := s.injection; inj != "" {
		c.Title += " " + inj
		c.Description += " " + inj
		c.Workaround += " " + inj
		for i := range c.Exploits {
			c.Exploits[i].Description += " " + inj
			c.Exploits[i].PoC += "\n# " + inj + "\n"
		}
	}
	return &c, s.big[strings.ToUpper(id)], true
}

// allVulns returns copies of every record, ordered by id.
func (s *Server) allVulns() []*Vuln {
	s.mu.Lock()
	ids := make([]string, 0, len(s.vulns))
	for id := range s.vulns {
		ids = append(ids, id)
	}
	s.mu.Unlock()
	sortStrings(ids)
	out := make([]*Vuln, 0, len(ids))
	for _, id := range ids {
		if v, _, ok := s.vuln(id); ok {
			out = append(out, v)
		}
	}
	return out
}

func (s *Server) prose(text string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.injection == "" {
		return text
	}
	return text + " " + s.injection
}

func day(y, m, d int) time.Time { return time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC) }

// seed adds the fixtures every fake starts with.
func (s *Server) seed() {
	s.vulns[Log4Shell] = &Vuln{ID: Log4Shell, Aliases: []string{"GHSA-jfh8-c2jp-5v3q"},
		Title:       "Apache Log4j2 JNDI features do not protect against attacker controlled LDAP",
		Description: "Apache Log4j2 2.0-beta9 through 2.15.0 JNDI features used in configuration, log messages, and parameters do not protect against attacker controlled LDAP and other JNDI related endpoints.",
		Published:   day(2021, 12, 10), Modified: day(2024, 6, 1), Severity: "CRITICAL", CVSS: 10.0,
		Vector: "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:C/C:H/I:H/A:H", EPSS: 0.944, EPSSPercentile: 0.999,
		CWEs: []string{"CWE-502", "CWE-400", "CWE-20"}, KEV: true, KEVDueDate: "2021-12-24",
		Vendor: "apache", Product: "log4j",
		Affected: []Affected{
			{Ecosystem: "maven", Package: "org.apache.logging.log4j:log4j-core", Introduced: "2.0-beta9", Fixed: "2.15.0",
				PURL: "pkg:maven/org.apache.logging.log4j/log4j-core"},
			{Ecosystem: "maven", Package: "org.apache.logging.log4j:log4j-core", Introduced: "2.13.0", Fixed: "2.16.0"},
		},
		Exploits: []Exploit{
			{ID: "6f1c9a7e-0c1e-4b55-9d1a-3f1f6e2a9b01", Source: "github", URL: "https://github.com/example/log4shell-poc",
				Description: "JNDI lookup proof of concept.", Maturity: "weaponized",
				PoC: "#!/bin/sh\ncurl -H 'X-Api-Version: ${jndi:ldap://127.0.0.1/a}' http://target/\n"},
			{ID: "0a7d3c55-5e0b-4f8e-8a2c-1b9e4d6f7a02", Source: "exploitdb", URL: "https://www.exploit-db.com/exploits/50592",
				Description: "Log4Shell RCE module.", Maturity: "poc", PoC: "print('poc')\n"},
		},
		Workaround: "Set log4j2.formatMsgNoLookups=true or remove the JndiLookup class from the classpath."}
	s.vulns[XZBackdoor] = &Vuln{ID: XZBackdoor, Title: "Malicious code in xz-utils 5.6.0 and 5.6.1",
		Description: "Malicious code was discovered in the upstream tarballs of xz, starting with version 5.6.0.",
		Published:   day(2024, 3, 29), Modified: day(2024, 5, 1), Severity: "CRITICAL", CVSS: 10.0,
		Vector: "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:C/C:H/I:H/A:H", EPSS: 0.12, EPSSPercentile: 0.95,
		CWEs: []string{"CWE-506"}, Vendor: "tukaani", Product: "xz",
		Affected: []Affected{{Ecosystem: "deb", Package: "xz-utils", Introduced: "5.6.0", Fixed: "5.6.2"},
			{Ecosystem: "rpm", Package: "xz", Introduced: "5.6.0", Fixed: "5.6.2"}},
		Workaround: "Downgrade to xz 5.4.6."}
	s.vulns[Spring4Shell] = &Vuln{ID: Spring4Shell, Title: "Spring Framework RCE via Data Binding on JDK 9+",
		Description: "A Spring MVC or Spring WebFlux application running on JDK 9+ may be vulnerable to remote code execution via data binding.",
		Published:   day(2022, 4, 1), Modified: day(2023, 2, 9), Severity: "CRITICAL", CVSS: 9.8,
		Vector: "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H", EPSS: 0.975, EPSSPercentile: 0.998,
		CWEs: []string{"CWE-94"}, Vendor: "vmware", Product: "spring_framework",
		Affected: []Affected{{Ecosystem: "maven", Package: "org.springframework:spring-beans", Introduced: "5.3.0", Fixed: "5.3.18"}}}
	s.AddBigVuln(LargeVulnID, LargeVulnSize)
	s.AddBigVuln(HugeVulnID, HugeVulnSize)
}
