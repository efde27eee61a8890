package hetznerapi

import (
	"errors"
	"slices"
	"testing"
)

func TestSelectorMatches(t *testing.T) {
	labels := map[string]string{"env": "prod", "tier": "web", "empty": "", "example.com/team": "dns"}
	cases := []struct {
		sel  string
		want bool
	}{
		{"", true},
		{"env=prod", true},
		{"env==prod", true},
		{"env = prod", true},
		{"env=dev", false},
		{"env!=dev", true},
		{"env!=prod", false},
		{"missing!=x", true},
		{"env", true},
		{"missing", false},
		{"!missing", true},
		{"!env", false},
		{"! env", false},
		{"empty", true},
		{"empty=", true},
		{"env in (dev,prod)", true},
		{"env in (dev, qa)", false},
		{"missing in (x)", false},
		{"env notin (dev,qa)", true},
		{"env notin (prod)", false},
		{"missing notin (x)", true},
		{"env=prod,tier=web", true},
		{"env=prod,tier=db", false},
		{"env in (prod,dev),tier notin (db),!missing,example.com/team=dns", true},
	}
	for _, c := range cases {
		sel, err := ParseSelector(c.sel)
		if err != nil {
			t.Errorf("%q: %v", c.sel, err)
			continue
		}
		if got := sel.Matches(labels); got != c.want {
			t.Errorf("%q matches = %v, want %v", c.sel, got, c.want)
		}
	}
}

func TestSelectorErrors(t *testing.T) {
	for _, s := range []string{",", "env=prod,", "=prod", "env=pr od", "env in ()", "env in (a,(b))", "env in (a",
		"env)", "-env", "env=-x", "env in (a,-b)", "!env=x", "env===x", "k" + string(make([]byte, 70))} {
		if _, err := ParseSelector(s); !errors.Is(err, ErrSelector) {
			t.Errorf("%q: err %v, want ErrSelector", s, err)
		}
	}
	sel, err := ParseSelector("hetzner.cloud/x=y")
	if err != nil || !sel.Matches(map[string]string{"hetzner.cloud/x": "y"}) {
		t.Errorf("reserved keys may be selected: %v", err)
	}
}

func FuzzParseSelector(f *testing.F) {
	for _, s := range []string{"env=prod", "a!=b,c", "!x", "k in (a,b)", "k notin (a)", "a==b", "p.example/k=v"} {
		f.Add(s)
	}
	ops := []string{"=", "!=", "exists", "!", "in", "notin"}
	f.Fuzz(func(t *testing.T, s string) {
		sel, err := ParseSelector(s)
		if err != nil {
			if !errors.Is(err, ErrSelector) {
				t.Fatalf("error %v does not wrap ErrSelector", err)
			}
			return
		}
		labels := map[string]string{}
		for _, r := range sel {
			if !slices.Contains(ops, r.Op) || checkSelectorKey(r.Key) != nil {
				t.Fatalf("bad requirement %+v from %q", r, s)
			}
			for _, v := range r.Values {
				if checkLabelValue(v) != nil {
					t.Fatalf("bad value %q from %q", v, s)
				}
			}
			if len(r.Values) > 0 {
				labels[r.Key] = r.Values[0]
			}
		}
		sel.Matches(labels)
		sel.Matches(nil)
	})
}
