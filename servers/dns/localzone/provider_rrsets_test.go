package localzone

import (
	"slices"
	"strings"
	"testing"

	"github.com/bulwarkmcp/bulwark/servers/dns"
)

func TestRRSetLifecycle(t *testing.T) {
	p, _ := newTestProvider(t, "")
	mustZone(t, p, "a.test")
	ttl := 300
	s, a, err := p.CreateRRSet(bg, "a.test", dns.CreateRRSetRequest{
		Name: "www", Type: "A", TTL: &ttl, Labels: map[string]string{"role": "web"},
		Records: []dns.Record{{Value: "192.0.2.1", Comment: " web 1 "}, {Value: "192.0.2.2"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if s.ID != "www/A" || *s.TTL != 300 || s.Labels["role"] != "web" || s.Records[0].Comment != "web 1" || s.Zone != 1 || a.Command != "create_rrset" {
		t.Errorf("created %+v, action %+v", s, a)
	}
	_, _, err = p.CreateRRSet(bg, "a.test", dns.CreateRRSetRequest{Name: "www", Type: "A", Records: recs("192.0.2.9")})
	wantCode(t, err, 409, "uniqueness_error")

	// add_records appends, ignores a value already there, creates when missing.
	if _, err := p.AddRecords(bg, "a.test", "www", "A", recs("192.0.2.3", "192.0.2.1"), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := p.AddRecords(bg, "1", "mail", "MX", recs("10 mx1", "20 mx2.example.net."), &ttl); err != nil {
		t.Fatal(err)
	}
	got, _ := p.GetRRSet(bg, "a.test", "www", "A")
	if !slices.Equal(values(got), []string{"192.0.2.1", "192.0.2.2", "192.0.2.3"}) || got.Labels["role"] != "web" {
		t.Errorf("www/A = %+v", got)
	}
	mx, _ := p.GetRRSet(bg, "a.test", "mail", "MX")
	if !slices.Equal(values(mx), []string{"10 mx1.a.test.", "20 mx2.example.net."}) || *mx.TTL != 300 {
		t.Errorf("mail/MX = %+v", mx)
	}

	// set, update comments, remove, change ttl.
	if _, err := p.SetRecords(bg, "a.test", "www", "A", recs("198.51.100.1", "198.51.100.2")); err != nil {
		t.Fatal(err)
	}
	if _, err := p.UpdateRecords(bg, "a.test", "www", "A", []dns.Record{{Value: "198.51.100.2", Comment: "second"}}); err != nil {
		t.Fatal(err)
	}
	_, err = p.UpdateRecords(bg, "a.test", "www", "A", []dns.Record{{Value: "198.51.100.9", Comment: "x"}})
	wantCode(t, err, 422, "invalid_input")
	if _, err := p.RemoveRecords(bg, "a.test", "www", "A", recs("198.51.100.1")); err != nil {
		t.Fatal(err)
	}
	_, err = p.RemoveRecords(bg, "a.test", "www", "A", recs("198.51.100.1"))
	wantCode(t, err, 422, "invalid_input")
	if _, err := p.ChangeRRSetTTL(bg, "a.test", "www", "A", nil); err != nil {
		t.Fatal(err)
	}
	got, _ = p.GetRRSet(bg, "a.test", "www", "A")
	if got.TTL != nil || len(got.Records) != 1 || got.Records[0].Comment != "second" {
		t.Errorf("www/A = %+v", got)
	}
	l, _ := p.UpdateRRSet(bg, "a.test", "www", "A", map[string]string{"x": "y"})
	if len(l.Labels) != 1 || l.Labels["x"] != "y" {
		t.Errorf("labels = %v", l.Labels)
	}

	// removing the last value deletes the rrset.
	if _, err := p.RemoveRecords(bg, "a.test", "www", "A", recs("198.51.100.2")); err != nil {
		t.Fatal(err)
	}
	_, err = p.GetRRSet(bg, "a.test", "www", "A")
	wantCode(t, err, 404, "not_found")
	// ...and forgets its labels: a new www/A starts bare.
	if _, err := p.AddRecords(bg, "a.test", "www", "A", recs("192.0.2.1"), nil); err != nil {
		t.Fatal(err)
	}
	if got, _ := p.GetRRSet(bg, "a.test", "www", "A"); len(got.Labels) != 0 {
		t.Errorf("labels survived deletion: %v", got.Labels)
	}
	if _, err := p.DeleteRRSet(bg, "a.test", "mail", "MX"); err != nil {
		t.Fatal(err)
	}
	for _, err := range []error{
		second(p.SetRecords(bg, "a.test", "nope", "A", recs("192.0.2.1"))),
		second(p.UpdateRecords(bg, "a.test", "nope", "A", recs("192.0.2.1"))),
		second(p.RemoveRecords(bg, "a.test", "nope", "A", recs("192.0.2.1"))),
		second(p.ChangeRRSetTTL(bg, "a.test", "nope", "A", nil)),
		second(p.ChangeRRSetProtection(bg, "a.test", "nope", "A", true)),
		second(p.DeleteRRSet(bg, "a.test", "mail", "MX")),
		second(p.UpdateRRSet(bg, "a.test", "nope", "A", nil)),
		second(p.GetRRSet(bg, "a.test", "nope", "A")),
		second(p.GetRRSet(bg, "nope.test", "www", "A")),
	} {
		wantCode(t, err, 404, "not_found")
	}
	if z, _ := p.GetZone(bg, "a.test"); z.RecordCount != 3 {
		t.Errorf("record_count = %d, want 3", z.RecordCount)
	}
}

func second[A, B any](_ A, b B) B { return b }

func TestRRSetProtection(t *testing.T) {
	p, _ := newTestProvider(t, "")
	mustZone(t, p, "a.test")
	if _, err := p.AddRecords(bg, "a.test", "www", "A", recs("192.0.2.1"), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := p.ChangeRRSetProtection(bg, "a.test", "www", "A", true); err != nil {
		t.Fatal(err)
	}
	ttl := 120
	for name, err := range map[string]error{
		"set":    second(p.SetRecords(bg, "a.test", "www", "A", recs("192.0.2.2"))),
		"add":    second(p.AddRecords(bg, "a.test", "www", "A", recs("192.0.2.2"), nil)),
		"remove": second(p.RemoveRecords(bg, "a.test", "www", "A", recs("192.0.2.1"))),
		"update": second(p.UpdateRecords(bg, "a.test", "www", "A", recs("192.0.2.1"))),
		"ttl":    second(p.ChangeRRSetTTL(bg, "a.test", "www", "A", &ttl)),
		"delete": second(p.DeleteRRSet(bg, "a.test", "www", "A")),
		"import": second(p.ImportZonefile(bg, "a.test", "")),
	} {
		t.Run(name, func(t *testing.T) { wantCode(t, err, 423, "protected") })
	}
	if s, err := p.UpdateRRSet(bg, "a.test", "www", "A", map[string]string{"k": "v"}); err != nil || !s.Protection.Change {
		t.Errorf("label update on a protected rrset = %+v, %v", s, err)
	}
	_, _, err := p.CreateRRSet(bg, "a.test", dns.CreateRRSetRequest{Name: "www", Type: "A", Records: recs("192.0.2.9")})
	wantCode(t, err, 409, "uniqueness_error")
	if _, err := p.ChangeRRSetProtection(bg, "a.test", "www", "A", false); err != nil {
		t.Fatal(err)
	}
	if _, err := p.DeleteRRSet(bg, "a.test", "www", "A"); err != nil {
		t.Fatal(err)
	}
}

func TestRRSetValidation(t *testing.T) {
	p, _ := newTestProvider(t, "")
	mustZone(t, p, "a.test")
	if _, err := p.AddRecords(bg, "a.test", "alias", "CNAME", recs("www"), nil); err != nil {
		t.Fatal(err)
	}
	low, high := 59, 2147483648
	create := func(name, typ string, ttl *int, rs ...string) error {
		_, _, err := p.CreateRRSet(bg, "a.test", dns.CreateRRSetRequest{Name: name, Type: typ, TTL: ttl, Records: recs(rs...)})
		return err
	}
	cases := map[string]struct {
		err   error
		field string
	}{
		"ttl low":          {create("x", "A", &low, "192.0.2.1"), "ttl"},
		"ttl high":         {create("x", "A", &high, "192.0.2.1"), "ttl"},
		"upper case":       {create("WWW", "A", nil, "192.0.2.1"), "name"},
		"trailing dot":     {create("www.", "A", nil, "192.0.2.1"), "name"},
		"ends in zone":     {create("www.a.test", "A", nil, "192.0.2.1"), "name"},
		"is zone":          {create("a.test", "A", nil, "192.0.2.1"), "name"},
		"inner star":       {create("a.*", "A", nil, "192.0.2.1"), "name"},
		"bad type":         {create("x", "LOC", nil, "1 2 3"), "type"},
		"lower type":       {create("x", "a", nil, "192.0.2.1"), "type"},
		"bad A":            {create("x", "A", nil, "192.0.2.300"), "records[0].value"},
		"AAAA in A":        {create("x", "A", nil, "2001:db8::1"), "records[0].value"},
		"empty value":      {create("x", "A", nil, " "), "records[0].value"},
		"no records":       {create("x", "A", nil), "records"},
		"duplicate":        {create("x", "A", nil, "192.0.2.1", "192.0.2.1"), "records[1].value"},
		"injected line":    {create("x", "A", nil, "192.0.2.1\nevil IN A 192.0.2.2"), "records[0].value"},
		"unquoted txt":     {create("x", "TXT", nil, "v=spf1 -all"), "records[0].value"},
		"cname coexists":   {create("alias", "TXT", nil, `"x"`), "records"},
		"cname at apex":    {create("@", "CNAME", nil, "www"), "records"},
		"two cnames":       {second(p.AddRecords(bg, "a.test", "alias", "CNAME", recs("other"), nil)), "records"},
		"soa elsewhere":    {create("x", "SOA", nil, "a. b. 1 2 3 4 5"), "records"},
		"delete soa":       {second(p.DeleteRRSet(bg, "a.test", "@", "SOA")), "records"},
		"second soa":       {second(p.AddRecords(bg, "a.test", "@", "SOA", recs("a. b. 1 2 3 4 5"), nil)), "records"},
		"delete NS":        {second(p.DeleteRRSet(bg, "a.test", "@", "NS")), "records"},
		"remove assigned":  {second(p.RemoveRecords(bg, "a.test", "@", "NS", recs("localhost."))), "records"},
		"comment newline":  {second(p.AddRecords(bg, "a.test", "x", "A", []dns.Record{{Value: "192.0.2.1", Comment: "a\nb"}}, nil)), "records[0].comment"},
		"add bad ttl":      {second(p.AddRecords(bg, "a.test", "x", "A", recs("192.0.2.1"), &low)), "ttl"},
		"change ttl bad":   {second(p.ChangeRRSetTTL(bg, "a.test", "alias", "CNAME", &low)), "ttl"},
		"selector":         {second(p.ListRRSets(bg, "a.test", dns.ListRRSetsOptions{LabelSelector: "a,,b"})), "label_selector"},
		"list bad type":    {second(p.ListRRSets(bg, "a.test", dns.ListRRSetsOptions{Types: []string{"X"}})), "type"},
		"list bad sort":    {second(p.ListRRSets(bg, "a.test", dns.ListRRSetsOptions{Sort: []string{"created"}})), "sort"},
		"list bad page":    {second(p.ListRRSets(bg, "a.test", dns.ListRRSetsOptions{PerPage: -1})), "per_page"},
		"label key":        {second(p.UpdateRRSet(bg, "a.test", "alias", "CNAME", map[string]string{"a b": ""})), "labels"},
		"update no record": {second(p.UpdateRecords(bg, "a.test", "alias", "CNAME", nil)), "records"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			de := wantCode(t, c.err, 422, "invalid_input")
			if de.Fields[0].Name != c.field {
				t.Errorf("field %q, want %q (%s)", de.Fields[0].Name, c.field, de.Message)
			}
		})
	}
	// Accepted forms: wildcards, underscores, extra apex NS, quoted TXT.
	for _, ok := range []error{
		create("*", "A", nil, "192.0.2.1"),
		create("*.sub", "AAAA", nil, "2001:DB8::1"),
		create("_sip._tcp", "SRV", nil, "10 5 5060 sip"),
		create("txt", "TXT", nil, `"v=spf1 -all"`, "single"),
		create("@", "CAA", nil, `0 issue "letsencrypt.org"`),
		second(p.AddRecords(bg, "a.test", "@", "NS", recs("ns2.example.net."), nil)),
	} {
		if ok != nil {
			t.Errorf("rejected: %v", ok)
		}
	}
	if s, _ := p.GetRRSet(bg, "a.test", "*.sub", "AAAA"); s.Records[0].Value != "2001:db8::1" {
		t.Errorf("AAAA value not canonical: %q", s.Records[0].Value)
	}
}

func TestListRRSets(t *testing.T) {
	p, _ := newTestProvider(t, "")
	mustZone(t, p, "a.test")
	for _, n := range []string{"b", "a", "c"} {
		if _, err := p.AddRecords(bg, "a.test", n, "A", recs("192.0.2.1"), nil); err != nil {
			t.Fatal(err)
		}
		if _, err := p.AddRecords(bg, "a.test", n, "TXT", recs(`"x"`), nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := p.UpdateRRSet(bg, "a.test", "b", "A", map[string]string{"env": "prod"}); err != nil {
		t.Fatal(err)
	}
	ids := func(l dns.RRSetList) string {
		var s []string
		for _, r := range l.RRSets {
			s = append(s, r.ID)
		}
		return strings.Join(s, ",")
	}
	cases := []struct {
		opts dns.ListRRSetsOptions
		want string
	}{
		{dns.ListRRSetsOptions{}, "@/NS,@/SOA,a/A,a/TXT,b/A,b/TXT,c/A,c/TXT"},
		{dns.ListRRSetsOptions{Sort: []string{"name:desc"}}, "c/A,c/TXT,b/A,b/TXT,a/A,a/TXT,@/NS,@/SOA"},
		{dns.ListRRSetsOptions{Name: "b"}, "b/A,b/TXT"},
		{dns.ListRRSetsOptions{Types: []string{"TXT", "NS"}}, "@/NS,a/TXT,b/TXT,c/TXT"},
		{dns.ListRRSetsOptions{LabelSelector: "env==prod"}, "b/A"},
		{dns.ListRRSetsOptions{LabelSelector: "env notin (prod)", Types: []string{"A"}}, "a/A,c/A"},
		{dns.ListRRSetsOptions{PerPage: 3, Page: 3}, "c/A,c/TXT"},
		{dns.ListRRSetsOptions{PerPage: 3, Page: 9}, ""},
	}
	for _, c := range cases {
		l, err := p.ListRRSets(bg, "a.test", c.opts)
		if err != nil || ids(l) != c.want {
			t.Errorf("ListRRSets(%+v) = %s, %v; want %s", c.opts, ids(l), err, c.want)
		}
	}
	if l, _ := p.ListRRSets(bg, "a.test", dns.ListRRSetsOptions{PerPage: 1000}); l.Pagination.PerPage != 100 {
		t.Errorf("per_page = %d, want 100", l.Pagination.PerPage)
	}
}
