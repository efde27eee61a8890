package store_test

import (
	"context"
	"errors"
	"net"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/bulwarkmcp/bulwark/kernel/store"
	"github.com/bulwarkmcp/bulwark/kernel/store/storetest"
)

// TestParseURL: each deployment's URL is read by go-redis's own parser for
// it, with the password from a file in the data nodes' place; a URL that
// cannot be used is refused without being repeated.
func TestParseURL(t *testing.T) {
	for _, tc := range []struct {
		name, raw, file string
		topology        store.Topology
		addrs           []string
		check           func(t *testing.T, c redis.UniversalClient)
	}{
		{name: "one server", raw: "redis://127.0.0.1:6390/2", topology: store.Single, addrs: []string{"127.0.0.1:6390"},
			check: func(t *testing.T, c redis.UniversalClient) {
				if o := c.(*redis.Client).Options(); o.DB != 2 || o.TLSConfig != nil || o.Password != "" {
					t.Errorf("%+v", o)
				}
			}},
		{name: "TLS, user and password", raw: "rediss://bulwark:s3cret@redis.internal:6380", topology: store.Single, addrs: []string{"redis.internal:6380"},
			check: func(t *testing.T, c redis.UniversalClient) {
				o := c.(*redis.Client).Options()
				if o.TLSConfig == nil || o.TLSConfig.ServerName != "redis.internal" || o.TLSConfig.InsecureSkipVerify || o.Username != "bulwark" || o.Password != "s3cret" {
					t.Errorf("%+v", o)
				}
			}},
		{name: "password from a file", raw: "rediss://bulwark@redis.internal:6380", file: "f1le", topology: store.Single,
			check: func(t *testing.T, c redis.UniversalClient) {
				if o := c.(*redis.Client).Options(); o.Username != "bulwark" || o.Password != "f1le" {
					t.Errorf("%+v", o)
				}
			}},
		{name: "unix socket", raw: "unix:///run/redis/redis.sock", topology: store.Single, addrs: []string{"/run/redis/redis.sock"}},
		{name: "cluster", raw: "redis://:s3cret@10.0.0.1:7000?addr=10.0.0.2:7000&addr=10.0.0.3:7000", topology: store.Cluster,
			addrs: []string{"10.0.0.1:7000", "10.0.0.2:7000", "10.0.0.3:7000"},
			check: func(t *testing.T, c redis.UniversalClient) {
				if o := c.(*redis.ClusterClient).Options(); o.Password != "s3cret" || o.TLSConfig != nil {
					t.Errorf("%+v", o)
				}
			}},
		{name: "cluster over TLS, password from a file", raw: "rediss://redis-0.redis:6379?addr=redis-1.redis:6379", file: "f1le", topology: store.Cluster,
			check: func(t *testing.T, c redis.UniversalClient) {
				if o := c.(*redis.ClusterClient).Options(); o.Password != "f1le" || o.TLSConfig == nil || o.TLSConfig.ServerName != "redis-0.redis" {
					t.Errorf("%+v", o)
				}
			}},
		{name: "sentinel", raw: "redis://:sentinelpw@10.0.0.1:26379/1?master_name=bulwark&addr=10.0.0.2:26379&password=s3cret", topology: store.Sentinel,
			addrs: []string{"10.0.0.1:26379", "10.0.0.2:26379"}},
		{name: "sentinel, password from a file", raw: "rediss://10.0.0.1:26379?master_name=bulwark", file: "f1le", topology: store.Sentinel,
			addrs: []string{"10.0.0.1:26379"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, err := store.ParseURL(tc.raw, tc.file)
			if err != nil {
				t.Fatal(err)
			}
			if e.Topology != tc.topology || (tc.addrs != nil && !slices.Equal(e.Addrs(), tc.addrs)) {
				t.Fatalf("%s %v", e.Topology, e.Addrs())
			}
			c := e.NewClient()
			defer c.Close()
			if tc.check != nil {
				tc.check(t, c)
			}
		})
	}
}

func TestParseURLRefuses(t *testing.T) {
	for _, tc := range []struct {
		raw, file string
		want      error
	}{
		{"redis://%zz:s3cret@host/0", "", store.ErrBadURLForTest},
		{"rediss://:s3cret@[bad", "", store.ErrBadURLForTest},
		{"redis://:s3cret@host/notadb", "", store.ErrBadURLForTest},
		{"http://:s3cret@host/0", "", store.ErrBadURLForTest},
		{"redis://:s3cret@host/0?colour=red", "", store.ErrBadURLForTest},
		{"redis://:s3cret@host?addr=nohostport", "", store.ErrBadURLForTest},
		{"redis://:s3cret@host?master_name=", "", store.ErrBadURLForTest},
		{"rediss://:s3cret@host/0?skip_verify=true", "", store.ErrSkipVerifyForTest},
		{"rediss://:s3cret@host?addr=h2:1&skip_verify=true", "", store.ErrSkipVerifyForTest},
		{"redis://:s3cret@host/0", "f1le", store.ErrTwoSecretsForTest},
		{"redis://host?addr=h2:1&addr=h3:1", "", nil},
		{"redis://:s3cret@host?addr=h2:1", "f1le", store.ErrTwoSecretsForTest},
		{"redis://host?master_name=m&password=s3cret", "f1le", store.ErrTwoSecretsForTest},
	} {
		_, err := store.ParseURL(tc.raw, tc.file)
		if !errors.Is(err, tc.want) || (err != nil && strings.Contains(err.Error(), "s3cret")) {
			t.Errorf("ParseURL(%q) = %v, want %v without the password", tc.raw, err, tc.want)
		}
	}
}

// FuzzParseURL: whatever the URL, ParseURL returns an Endpoint or one of
// its own errors, and no error repeats the password.
func FuzzParseURL(f *testing.F) {
	f.Add("redis://:pw@127.0.0.1:6379/0", "")
	f.Add("rediss://u@h:1?addr=h2:2&addr=h3:3", "pw")
	f.Add("redis://:pw@h:26379?master_name=m&addr=h2:26379&password=pw2", "")
	f.Fuzz(func(t *testing.T, raw, file string) {
		const marker = "Zq8mK3vP"
		raw = strings.ReplaceAll(raw, "pw", marker)
		e, err := store.ParseURL(raw, file)
		switch {
		case err == nil:
			if e.NewClient().Close() != nil {
				return
			}
		case !errors.Is(err, store.ErrBadURLForTest) && !errors.Is(err, store.ErrSkipVerifyForTest) && !errors.Is(err, store.ErrTwoSecretsForTest):
			t.Fatalf("error %v is none of ParseURL's", err)
		case strings.Contains(err.Error(), marker):
			t.Fatalf("the error repeats the password: %v", err)
		}
	})
}

// TestCheckRefusesAClusterNode: a one-server URL that reaches a Cluster
// node would not follow its redirections; startup refuses it.
func TestCheckRefusesAClusterNode(t *testing.T) {
	seeds := os.Getenv("BULWARK_TEST_REDIS_CLUSTER")
	if seeds == "" {
		t.Skip("needs BULWARK_TEST_REDIS_CLUSTER (scripts/test starts a Cluster)")
	}
	seed, _, _ := strings.Cut(seeds, ",")
	e, err := store.ParseURL("redis://"+seed+"/0", "")
	if err != nil {
		t.Fatal(err)
	}
	c := e.NewClient()
	defer c.Close()
	if err := e.Check(context.Background(), c); !errors.Is(err, store.ErrClusterNode) {
		t.Fatalf("Check = %v, want ErrClusterNode", err)
	}
	tg := storetest.New(t)
	e, err = store.ParseURL(tg.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Check(context.Background(), tg.NewClient(t)); err != nil {
		t.Fatalf("the Cluster's own URL: %v", err)
	}
}

func portOf(addr string) string {
	_, p, _ := net.SplitHostPort(addr)
	return p
}

func containsLine(text, line string) bool {
	for _, l := range strings.Split(text, "\n") {
		if strings.TrimSpace(l) == line {
			return true
		}
	}
	return false
}
