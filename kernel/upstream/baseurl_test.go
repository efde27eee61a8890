package upstream

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestValidateBaseURL(t *testing.T) {
	const def = "api.hetzner.cloud"
	tests := []struct {
		name, raw string
		want      string // the cleaned URL; "" when refused
		warnings  int
	}{
		{"default", "https://api.hetzner.cloud/v1", "https://api.hetzner.cloud/v1", 0},
		{"trailing slash trimmed", "https://api.hetzner.cloud/v1/", "https://api.hetzner.cloud/v1", 0},
		{"upper-case host is the default", "HTTPS://API.Hetzner.Cloud/v1", "https://API.Hetzner.Cloud/v1", 0},
		{"trailing-dot default host", "https://api.hetzner.cloud./v1", "https://api.hetzner.cloud./v1", 0},
		{"other https host warns", "https://dns.example.net/v1", "https://dns.example.net/v1", 1},
		{"https with port", "https://api.hetzner.cloud:8443/v1", "https://api.hetzner.cloud:8443/v1", 0},
		{"no path", "https://api.hetzner.cloud", "https://api.hetzner.cloud", 0},
		{"http 127.0.0.1", "http://127.0.0.1:8080/v1", "http://127.0.0.1:8080/v1", 2},
		{"http 127.0.0.2", "http://127.0.0.2/v1", "http://127.0.0.2/v1", 2},
		{"http 127.255.255.254", "http://127.255.255.254/", "http://127.255.255.254", 2},
		{"http ::1", "http://[::1]:9/v1", "http://[::1]:9/v1", 2},
		{"http mapped loopback", "http://[::ffff:127.0.0.1]/v1", "http://[::ffff:127.0.0.1]/v1", 2},
		{"http localhost", "http://localhost:1/v1", "http://localhost:1/v1", 2},
		{"http LOCALHOST", "http://LOCALHOST/v1", "http://LOCALHOST/v1", 2},
		{"http localhost.", "http://localhost./v1", "http://localhost./v1", 2},
		{"http sub.localhost", "http://api.sub.localhost/v1", "http://api.sub.localhost/v1", 2},

		{"empty", "", "", 0},
		{"unparsable", "https://exa mple.com/", "", 0},
		{"no scheme", "api.hetzner.cloud/v1", "", 0},
		{"ftp", "ftp://api.hetzner.cloud/", "", 0},
		{"javascript", "javascript:alert(1)", "", 0},
		{"opaque https", "https:api.hetzner.cloud", "", 0},
		{"http public", "http://api.hetzner.cloud/v1", "", 0},
		{"http localhost prefix", "http://localhost.evil.com/", "", 0},
		{"http 127 prefix name", "http://127.0.0.1.evil.com/", "", 0},
		{"http localhostx", "http://localhostx/", "", 0},
		{"http 128.0.0.1", "http://128.0.0.1/", "", 0},
		{"http mapped public", "http://[::ffff:8.8.8.8]/", "", 0},
		{"http 0.0.0.0", "http://0.0.0.0/", "", 0},
		{"http [::]", "http://[::]/", "", 0},
		{"short numeric 127.1", "http://127.1/", "", 0},
		{"hex ipv4", "http://0x7f.0.0.1/", "", 0},
		{"decimal ipv4", "http://2130706433/", "", 0},
		{"leading zero ipv4", "http://127.0.0.01/", "", 0},
		{"numeric last label https", "https://example.123/", "", 0},
		{"zone id", "http://[fe80::1%25eth0]/", "", 0},
		{"userinfo", "https://user:pass@api.hetzner.cloud/v1", "", 0},
		{"user only", "https://tok@api.hetzner.cloud/v1", "", 0},
		{"empty userinfo", "https://@api.hetzner.cloud/v1", "", 0},
		{"query", "https://api.hetzner.cloud/v1?token=x", "", 0},
		{"empty query", "https://api.hetzner.cloud/v1?", "", 0},
		{"fragment", "https://api.hetzner.cloud/v1#x", "", 0},
		{"empty fragment", "https://api.hetzner.cloud/v1#", "", 0},
		{"no host", "https:///v1", "", 0},
		{"empty port", "https://api.hetzner.cloud:/v1", "", 0},
		{"port 0", "https://api.hetzner.cloud:0/v1", "", 0},
		{"port too big", "https://api.hetzner.cloud:65536/v1", "", 0},
		{"underscore host", "https://a_b.example.com/", "", 0},
		{"dot segment", "https://api.hetzner.cloud/v1/../x", "", 0},
		{"label too long", "https://" + strings.Repeat("a", 64) + ".com/", "", 0},
		{"hyphen edge", "https://-a.example.com/", "", 0},
		{"empty label", "https://a..example.com/", "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, warnings, err := ValidateBaseURL(tt.raw, def)
			if tt.want == "" {
				if err == nil {
					t.Fatalf("ValidateBaseURL(%q) = %v, want an error", tt.raw, u)
				}
				if !errors.Is(err, ErrBaseURL) {
					t.Errorf("error %v does not wrap ErrBaseURL", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("ValidateBaseURL(%q): %v", tt.raw, err)
			}
			if got := u.String(); got != tt.want {
				t.Errorf("url = %q, want %q", got, tt.want)
			}
			if len(warnings) != tt.warnings {
				t.Errorf("warnings = %q, want %d", warnings, tt.warnings)
			}
		})
	}
}

func TestValidateBaseURLNeverEchoes(t *testing.T) {
	const secret = "hcloudSECRETtoken42"
	for _, raw := range []string{
		"https://" + secret + "@api.hetzner.cloud/v1",
		"https://api.hetzner.cloud/v1?token=" + secret,
		"https://api.hetzner.cloud/v1#" + secret,
		"http://" + secret + ".example.com/",
		"https://exa mple.com/" + secret,
		"ftp://" + secret,
		"%" + secret,
		"https://api.hetzner.cloud:" + secret + "/",
	} {
		_, _, err := ValidateBaseURL(raw, "api.hetzner.cloud")
		if err == nil {
			t.Fatalf("ValidateBaseURL accepted a hostile value")
		}
		if strings.Contains(err.Error(), secret) {
			t.Errorf("error echoes the value: %v", err)
		}
	}
	raw := "https://exa mple.com/" + secret
	_, _, err := ValidateBaseURL(raw, "")
	if want := fmt.Sprintf("a value of %d characters", len(raw)); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("unparsable error = %v, want it to report the length (%q)", err, want)
	}
}

func TestValidateBaseURLNoDefaultHost(t *testing.T) {
	_, w, err := ValidateBaseURL("https://anything.example/", "")
	if err != nil || len(w) != 0 {
		t.Fatalf("got warnings %q, err %v; want none", w, err)
	}
}

func TestIsLoopbackHost(t *testing.T) {
	tests := []struct {
		host string
		want bool
	}{
		{"127.0.0.1", true},
		{"127.0.0.2", true},
		{"127.1.2.3", true},
		{"::1", true},
		{"[::1]", true},
		{"::ffff:127.0.0.1", true},
		{"[::ffff:127.9.9.9]", true},
		{"0:0:0:0:0:0:0:1", true},
		{"localhost", true},
		{"LocalHost", true},
		{"localhost.", true},
		{"sub.localhost", true},
		{"a.b.localhost.", true},
		{"", false},
		{"localhost..", false},
		{".localhost", false},
		{"localhost.com", false},
		{"localhostx", false},
		{"mylocalhost", false},
		{"127.0.0.1.nip.io", false},
		{"127.1", false},
		{"0x7f000001", false},
		{"2130706433", false},
		{"0.0.0.0", false},
		{"::", false},
		{"::ffff:10.0.0.1", false},
		{"fe80::1%lo", false},
		{"128.0.0.1", false},
		{"localhost:80", false},
		{"[::1]:80", false},
	}
	for _, tt := range tests {
		if got := IsLoopbackHost(tt.host); got != tt.want {
			t.Errorf("IsLoopbackHost(%q) = %v, want %v", tt.host, got, tt.want)
		}
	}
}
