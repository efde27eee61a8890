package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/redis/go-redis/v9"

	"github.com/bulwarkmcp/bulwark/internal/fake/hetznerapi"
	"github.com/bulwarkmcp/bulwark/kernel/identity"
	"github.com/bulwarkmcp/bulwark/kernel/store/storetest"
)

// The binary's shared-state connection tests: two `bulwark dns --http`
// processes on one Redis, reached through BULWARK_REDIS_URL as an
// operator writes it, share a confirmation token. scripts/test runs them
// against one server, a Redis Cluster and Sentinel (storetest picks the one
// the environment names).

const replicaKey = "bulwark-replica-test-key"

// replicaEnv is what both replicas share: the fake DNS API with one zone,
// and an API-key file.
type replicaEnv struct {
	api  *hetznerapi.Server
	keys string
}

func newReplicaEnv(t *testing.T) *replicaEnv {
	t.Helper()
	api := hetznerapi.Start(t, nil)
	if _, err := api.AddZone(hetznerapi.ZoneSeed{Name: "example.com"}); err != nil {
		t.Fatal(err)
	}
	keys := filepath.Join(t.TempDir(), "keys")
	if err := os.WriteFile(keys, []byte(identity.HashKey(replicaKey)+" pro alice\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return &replicaEnv{api: api, keys: keys}
}

// start runs one replica with the extra environment and flags, and returns
// a connected client and its log.
func (r *replicaEnv) start(t *testing.T, env []string, args ...string) (*mcp.ClientSession, *lockedBuffer) {
	t.Helper()
	cmd := exec.Command(binary(t), append([]string{"dns", "--http", "127.0.0.1:0", "--auth", "apikey", "--api-keys-file", r.keys}, args...)...)
	cmd.Env = append(append(baseEnv(), "HETZNER_API_TOKEN="+r.api.Token(), "HETZNER_API_BASE_URL="+r.api.URL()), env...)
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	})
	url := ""
	for deadline := time.Now().Add(15 * time.Second); url == ""; time.Sleep(20 * time.Millisecond) {
		if _, rest, ok := strings.Cut(stderr.String(), "serving Streamable HTTP\" url="); ok {
			url, _, _ = strings.Cut(rest, "\n")
		}
		if time.Now().After(deadline) || cmd.ProcessState != nil {
			t.Fatalf("the replica did not start: %s", stderr.String())
		}
	}
	hc := &http.Client{Transport: bearer(replicaKey)}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "replica-test"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr.String())
	}
	t.Cleanup(func() { cs.Close() })
	return cs, &stderr
}

// bearer adds an API key to every request.
type bearer string

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}

// tokenSplit asks replica a to delete the zone, confirms with the token on
// b, and replays it on a: the zone is deleted once.
func tokenSplit(t *testing.T, a, b *mcp.ClientSession, api *hetznerapi.Server) {
	t.Helper()
	ctx := context.Background()
	args := map[string]any{"zone": "example.com"}
	res, err := a.CallTool(ctx, &mcp.CallToolParams{Name: "delete_zone", Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	tok, _ := res.StructuredContent.(map[string]any)["confirmToken"].(string)
	if tok == "" {
		t.Fatalf("no token from replica A: %+v", res)
	}
	args["confirmToken"] = tok
	if res, err := b.CallTool(ctx, &mcp.CallToolParams{Name: "delete_zone", Arguments: args}); err != nil || res.IsError {
		t.Fatalf("replica B refused replica A's token: %v %+v", err, res)
	}
	if res, err := a.CallTool(ctx, &mcp.CallToolParams{Name: "delete_zone", Arguments: args}); err != nil || !res.IsError {
		t.Fatalf("the token confirmed twice: %v %+v", err, res)
	}
	if _, ok := api.Zone("example.com"); ok {
		t.Fatal("the zone is still there")
	}
}

// TestSharedRedisReplicas: the deployment the environment names (one
// server, a Cluster's seeds, or Sentinel's master name and sentinels), in
// BULWARK_REDIS_URL.
func TestSharedRedisReplicas(t *testing.T) {
	tg := storetest.New(t)
	r := newReplicaEnv(t)
	env := []string{"BULWARK_REDIS_URL=" + tg.URL}
	a, logA := r.start(t, env)
	b, _ := r.start(t, env)
	if !strings.Contains(logA.String(), `msg="shared state in Redis" topology=`) {
		t.Fatalf("no startup line: %s", logA.String())
	}
	tokenSplit(t, a, b, r.api)
	t.Logf("against %s: %s", tg.Kind, firstLine(logA.String(), "shared state in Redis"))
}

// TestSharedRedisTLSAndPasswordFile: a TLS Redis (rediss://) with an ACL
// user, whose CA the binary trusts through SSL_CERT_FILE; one replica has
// the password in the URL, the other in -redis-password-file. A wrong
// password stops startup without printing it.
func TestSharedRedisTLSAndPasswordFile(t *testing.T) {
	dir := t.TempDir()
	ca, cert, key := tlsFiles(t, dir)
	tlsAddr := tlsRedis(t, dir, ca, cert, key)
	r := newReplicaEnv(t)
	pw := filepath.Join(dir, "pw")
	if err := os.WriteFile(pw, []byte("s3cret-pw\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	a, logA := r.start(t, []string{"SSL_CERT_FILE=" + ca, "BULWARK_REDIS_URL=rediss://bulwark:s3cret-pw@" + tlsAddr + "/0"})
	b, logB := r.start(t, []string{"SSL_CERT_FILE=" + ca, "BULWARK_REDIS_URL=rediss://bulwark@" + tlsAddr + "/0"}, "--redis-password-file", pw)
	tokenSplit(t, a, b, r.api)
	for _, l := range []*lockedBuffer{logA, logB} {
		if strings.Contains(l.String(), "s3cret-pw") {
			t.Fatalf("the password was printed: %s", l.String())
		}
	}
	code, _, stderr := runBinary(t, append(baseEnv(), "SSL_CERT_FILE="+ca, "HETZNER_API_TOKEN=x",
		"BULWARK_REDIS_URL=rediss://bulwark:wr0ng-pw@"+tlsAddr+"/0"), nil, "dns", "--http", "127.0.0.1:0")
	if code == 0 || !strings.Contains(stderr, "shared-state Redis") || strings.Contains(stderr, "wr0ng-pw") {
		t.Fatalf("a wrong password: exit %d, %s", code, stderr)
	}
}

// tlsRedis starts a redis-server that speaks TLS only, with the ACL user
// bulwark (password s3cret-pw) and no default user, and returns its
// address once it answers.
func tlsRedis(t *testing.T, dir, ca, cert, key string) string {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI=true but redis-server is not on PATH")
		}
		t.Skip("needs redis-server on PATH")
	}
	port := freePort(t)
	cmd := exec.Command("redis-server", "--port", "0", "--tls-port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", dir, "--tls-cert-file", cert, "--tls-key-file", key, "--tls-auth-clients", "no",
		"--user", "default", "off", "--user", "bulwark", "on", ">s3cret-pw", "~*", "&*", "+@all")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	addr := net.JoinHostPort("127.0.0.1", port)
	pem, err := os.ReadFile(ca)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	c := redis.NewClient(&redis.Options{Addr: addr, Username: "bulwark", Password: "s3cret-pw", MaxRetries: -1,
		TLSConfig: &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"}})
	defer c.Close()
	for i := 0; c.Ping(context.Background()).Err() != nil; i++ {
		if i == 100 {
			t.Fatal("the TLS redis-server did not start")
		}
		time.Sleep(50 * time.Millisecond)
	}
	return addr
}

func firstLine(log, with string) string {
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, with) {
			return l
		}
	}
	return ""
}

func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, p, _ := net.SplitHostPort(ln.Addr().String())
	return p
}

// tlsFiles writes a CA and a server certificate for 127.0.0.1 signed by
// it, and returns the CA's, the certificate's and the key's paths.
func tlsFiles(t *testing.T, dir string) (ca, cert, key string) {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "bulwark test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true,
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	srvKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	srvTmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "redis"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	srvDER, err := x509.CreateCertificate(rand.Reader, srvTmpl, caCert, &srvKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, _ := x509.MarshalECPrivateKey(srvKey)
	write := func(name, typ string, der []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	return write("ca.pem", "CERTIFICATE", caDER), write("redis.pem", "CERTIFICATE", srvDER), write("redis.key", "EC PRIVATE KEY", keyDER)
}
