package gateway_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/bulwarkmcp/bulwark/internal/fake/mcpupstream"
	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/audit"
	"github.com/bulwarkmcp/bulwark/kernel/confirm"
	"github.com/bulwarkmcp/bulwark/kernel/identity"
	"github.com/bulwarkmcp/bulwark/kernel/mcptest"
	"github.com/bulwarkmcp/bulwark/kernel/seal"
	"github.com/bulwarkmcp/bulwark/kernel/store/storetest"
	"github.com/bulwarkmcp/bulwark/servers/gateway"
)

// The parked relay across replicas (servers/gateway/replicas.go,
// kernel/stateroute.go): gateway replicas served over HTTP on loopback,
// sharing the requestState key, the confirmation store and the store of
// parked calls (storetest: the Redis BULWARK_TEST_REDIS names, else
// miniredis), each with its own upstream process.

const (
	aliceKey = "client-k3y-relay-alice-0123456789"
	bobKey   = "client-k3y-relay-bob-0123456789"
)

// relayDeployment is what the replicas of one test share.
type relayDeployment struct {
	t      *testing.T
	tg     *storetest.Target
	sealer *seal.Sealer
	keys   identity.Authenticator
}

func newRelayDeployment(t *testing.T) *relayDeployment {
	t.Helper()
	sealer, err := seal.New([]byte("0123456789abcdef0123456789abcdef-replica-relay"), nil)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := identity.ParseAPIKeys(strings.NewReader(identity.HashKey(aliceKey) + " free alice\n" + identity.HashKey(bobKey) + " free bob\n"))
	if err != nil {
		t.Fatal(err)
	}
	return &relayDeployment{t: t, tg: storetest.New(t), sealer: sealer, keys: keys}
}

// relayReplica is one gateway replica and its HTTP server.
type relayReplica struct {
	*fixture
	url       string
	srv       *httptest.Server
	forwarded atomic.Int64 // requests that came in marked as forwarded
	all       atomic.Int64 // every request
}

type replicaOpts struct {
	share  bool                  // ShareParked with its own URL
	redis  redis.UniversalClient // the parked calls' store; a fresh client on the test's Redis when nil
	cfg    gateway.Config
	noConf bool // a confirmation store of its own (no shared single use)
	tasks  bool // the upstream relays tasks (taskUpstream), not the fake's elicitation
}

func (d *relayDeployment) replica(o replicaOpts) *relayReplica {
	t := d.t
	t.Helper()
	u := fakeUpstream()
	u.ReadOnlyTools = slices.Concat(readOnlyTools, []string{"elicit"})
	u.RelayElicitation = true
	getenv := testEnv
	kopts := kernel.Options{Sealer: d.sealer}
	if o.tasks {
		u, getenv = taskUpstream(), taskEnv
		kopts.Secrets = []string{mcpupstream.Secret}
	}
	cfg := o.cfg
	cfg.Upstreams = []gateway.Upstream{u}
	if !o.noConf {
		kopts.Confirm = confirm.NewIssuer(d.tg.Store(t), nil)
	}
	r := &relayReplica{}
	r.fixture = newFixture(t, options{cfg: cfg, kopts: kopts, route: o.share, getenv: getenv})
	r.srv = httptest.NewUnstartedServer(nil)
	h, err := r.ks.HTTPHandler(kernel.HTTPOptions{Addr: r.srv.Listener.Addr().String(), Auth: d.keys})
	if err != nil {
		t.Fatal(err)
	}
	r.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.all.Add(1)
		if req.Header.Get(kernel.ForwardedHeader) != "" {
			r.forwarded.Add(1)
		}
		h.ServeHTTP(w, req)
	})
	r.srv.Start()
	t.Cleanup(r.srv.Close)
	r.url = r.srv.URL + kernel.MCPPath
	if o.share {
		client := o.redis
		if client == nil {
			client = d.tg.NewClient(t)
		}
		if err := r.gw.ShareParked(gateway.Replicas{Redis: client, KeyPrefix: d.tg.Prefix + "gateway:parked:",
			TaskKeyPrefix: d.tg.Prefix + "gateway:tasks:", Advertise: r.url, Sealer: d.sealer}); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

// parkedKeys are the parked calls' records in the store.
func (d *relayDeployment) parkedKeys() []string {
	d.t.Helper()
	c := d.tg.NewClient(d.t)
	keys, err := d.tg.Keys(context.Background(), c, "gateway:parked:*")
	if err != nil {
		d.t.Fatal(err)
	}
	return keys
}

// rpcAnswer is a tools/call's JSON-RPC answer.
type rpcAnswer struct {
	status int
	raw    string
	Result struct {
		ResultType   string `json:"resultType"`
		RequestState string `json:"requestState"`
		IsError      bool   `json:"isError"`
		Content      []struct {
			Text string `json:"text"`
		} `json:"content"`
		Structured map[string]any `json:"structuredContent"`
	} `json:"result"`
	Error *struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
}

func (a *rpcAnswer) text() string {
	var b strings.Builder
	for _, c := range a.Result.Content {
		b.WriteString(c.Text)
	}
	return b.String()
}

// elicitCall sends fake.elicit to endpoint as the key's principal: a first
// call without state, or the answer "green" to state; header adds headers.
func elicitCall(t *testing.T, endpoint, key, state string, header map[string]string) *rpcAnswer {
	t.Helper()
	params := map[string]any{"name": "fake.elicit", "arguments": map[string]any{"message": "Pick a colour."}, "_meta": map[string]any{
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "t", "version": "0"},
		"io.modelcontextprotocol/clientCapabilities": map[string]any{"elicitation": map[string]any{"form": map[string]any{}}}}}
	if state != "" {
		params["inputResponses"] = map[string]any{"upstream_fake": map[string]any{"action": "accept", "content": map[string]any{"field0": "green"}}}
		params["requestState"] = state
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
	h := map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "fake.elicit", "Authorization": "Bearer " + key}
	for k, v := range header {
		h[k] = v
	}
	resp, out := mcptest.Post(t, endpoint, string(body), h)
	a := &rpcAnswer{status: resp.StatusCode, raw: out}
	if err := json.Unmarshal([]byte(out), a); err != nil {
		t.Fatalf("the answer of %s is not JSON-RPC: %v: %s", endpoint, err, out)
	}
	return a
}

// park asks on r and returns the requestState of the parked call.
func park(t *testing.T, r *relayReplica) string {
	t.Helper()
	first := elicitCall(t, r.url, aliceKey, "", nil)
	if first.Result.ResultType != "input_required" || first.Result.RequestState == "" || gateway.Parked(r.gw) != 1 {
		t.Fatalf("the upstream call is not parked (parked %d): %s", gateway.Parked(r.gw), first.raw)
	}
	return first.Result.RequestState
}

// completed reports whether a is the resumed call's result, the answer in it.
func completed(a *rpcAnswer) bool {
	return a.Error == nil && !a.Result.IsError && strings.Contains(a.text(), "elicit action=accept") && strings.Contains(a.text(), "green")
}

// refusedState reports whether a is the kernel's refusal of a requestState.
func refusedState(a *rpcAnswer) bool {
	return a.Error != nil && a.Error.Code == -32602 && strings.Contains(a.Error.Message, "requestState") &&
		strings.Contains(a.Error.Message, "again without it") && !strings.Contains(a.raw, "green")
}

// upstreamRan reports whether rs hold a call that ran on the replica's
// upstream to its end (the gateway names the upstream of every record of
// its tools, a forwarded one too).
func upstreamRan(rs []audit.Record) bool {
	return slices.ContainsFunc(rs, func(r audit.Record) bool { return r.Outcome == audit.OK })
}

// TestReplicasParkedRelayAnswerOnAnotherReplica: issue 32's "MRTR answer
// sent to B". A parks the upstream call of a relayed question and records
// in the shared store that it holds it; the client's answer reaches B,
// which forwards the client's own request to A; A resumes the call and the
// result reaches the client through B. A writes the call's record (ok, its
// upstream), B one "forwarded" record naming A, and nothing reaches B's
// upstream. The record is gone once the call resumed, and the answer
// replayed on A, B or a third replica C is refused.
func TestReplicasParkedRelayAnswerOnAnotherReplica(t *testing.T) {
	d := newRelayDeployment(t)
	a, b, c := d.replica(replicaOpts{share: true}), d.replica(replicaOpts{share: true}), d.replica(replicaOpts{share: true})
	state := park(t, a)
	if keys := d.parkedKeys(); len(keys) != 1 || strings.Contains(keys[0], state) {
		t.Fatalf("the parked call's record: %v", keys)
	}
	beforeA, beforeB := len(a.records()), len(b.records())

	got := elicitCall(t, b.url, aliceKey, state, nil)
	if !completed(got) {
		t.Fatalf("the answer sent to B: %s", got.raw)
	}
	if a.forwarded.Load() != 1 || gateway.Parked(a.gw) != 0 {
		t.Fatalf("A got %d forwarded requests, %d parked", a.forwarded.Load(), gateway.Parked(a.gw))
	}
	if keys := d.parkedKeys(); len(keys) != 0 {
		t.Fatalf("the record outlived the call: %v", keys)
	}
	recA, recB := a.records()[beforeA:], b.records()[beforeB:]
	if len(recA) != 1 || recA[0].Outcome != audit.OK || recA[0].Upstream != "fake" || recA[0].Principal != "alice" || recA[0].Tool != "fake.elicit" {
		t.Fatalf("A's records of the resumed call: %+v", recA)
	}
	if len(recB) != 1 || recB[0].Outcome != audit.Forwarded || recB[0].Principal != "alice" || recB[0].Tool != "fake.elicit" ||
		recB[0].Attrs["forwarded_to"] != strings.TrimPrefix(a.srv.URL, "http://") || upstreamRan(recB) {
		t.Fatalf("B's records: %+v", recB)
	}

	for name, r := range map[string]*relayReplica{"A": a, "B": b, "C": c} {
		if again := elicitCall(t, r.url, aliceKey, state, nil); !refusedState(again) {
			t.Fatalf("the answer replayed on %s: %s", name, again.raw)
		}
	}
	if a.forwarded.Load() != 1 || upstreamRan(b.records()) || upstreamRan(c.records()) {
		t.Fatalf("a replay was forwarded (%d) or ran on B or C", a.forwarded.Load())
	}
}

// TestReplicasParkedRelayAnswerRunsOnce: the same answer sent at once to A,
// B and C (B and C forward it to A) resumes the call once: the
// requestState is spent where the call runs, and forwarding never spends it.
func TestReplicasParkedRelayAnswerRunsOnce(t *testing.T) {
	d := newRelayDeployment(t)
	a, b, c := d.replica(replicaOpts{share: true}), d.replica(replicaOpts{share: true}), d.replica(replicaOpts{share: true})
	state := park(t, a)
	var wg sync.WaitGroup
	answers := make([]*rpcAnswer, 3)
	for i, r := range []*relayReplica{a, b, c} {
		wg.Go(func() { answers[i] = elicitCall(t, r.url, aliceKey, state, nil) })
	}
	wg.Wait()
	ok := 0
	for _, got := range answers {
		switch {
		case completed(got):
			ok++
		case refusedState(got):
		default:
			t.Fatalf("an answer: %s", got.raw)
		}
	}
	if ok != 1 {
		t.Fatalf("the call resumed %d times", ok)
	}
	runs := 0
	for _, r := range a.records() {
		if r.Outcome == audit.OK && r.Upstream == "fake" {
			runs++
		}
	}
	if runs != 1 || upstreamRan(b.records()) || upstreamRan(c.records()) {
		t.Fatalf("A completed %d calls; B or C ran one", runs)
	}
}

// TestReplicasParkedRelayStolenState: bob's client sends alice's
// requestState (and answer) to B. It does not open for bob, so B looks
// nothing up and forwards nothing; the kernel refuses it as on any
// replica, and alice's own answer then completes the call.
func TestReplicasParkedRelayStolenState(t *testing.T) {
	d := newRelayDeployment(t)
	a, b := d.replica(replicaOpts{share: true}), d.replica(replicaOpts{share: true})
	state := park(t, a)
	if got := elicitCall(t, b.url, bobKey, state, nil); !refusedState(got) {
		t.Fatalf("bob's answer with alice's state: %s", got.raw)
	}
	if a.forwarded.Load() != 0 || gateway.Parked(a.gw) != 1 {
		t.Fatalf("bob's answer reached A (%d) or ended the call", a.forwarded.Load())
	}
	if got := elicitCall(t, b.url, aliceKey, state, nil); !completed(got) {
		t.Fatalf("alice's answer after bob's: %s", got.raw)
	}
}

// TestReplicasParkedRelayForgedHopMark: a client that sends the forwarding
// mark itself only turns forwarding off for its own request: B answers it
// here (the question is not open here), nothing reaches A, and the call
// parked on A is untouched.
func TestReplicasParkedRelayForgedHopMark(t *testing.T) {
	d := newRelayDeployment(t)
	a, b := d.replica(replicaOpts{share: true}), d.replica(replicaOpts{share: true})
	state := park(t, a)
	got := elicitCall(t, b.url, aliceKey, state, map[string]string{kernel.ForwardedHeader: "1"})
	if completed(got) || !got.Result.IsError || !strings.Contains(got.text(), "no longer open") {
		t.Fatalf("the answer with a forged mark on B: %s", got.raw)
	}
	if a.all.Load() != 1 || gateway.Parked(a.gw) != 1 || upstreamRan(b.records()) {
		t.Fatalf("A got %d requests (the first call only), %d parked", a.all.Load(), gateway.Parked(a.gw))
	}
}

// TestReplicasParkedRelayRecordNotFollowed: B follows only a record sealed
// with the requestState key for this call's key, naming an MCP endpoint: a
// record written without the key, sealed for another call, sealed with
// another key, or naming a URL with credentials, a query or another path is
// not followed — nothing dials the address it names (no SSRF, and the
// client's credentials go nowhere) — and the answer is B's to refuse.
func TestReplicasParkedRelayRecordNotFollowed(t *testing.T) {
	d := newRelayDeployment(t)
	b := d.replica(replicaOpts{share: true})
	var trapped atomic.Int64
	trap := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { trapped.Add(1) }))
	t.Cleanup(trap.Close)
	other, err := seal.New([]byte("another-key-0123456789abcdef0123456789abcdef"), nil)
	if err != nil {
		t.Fatal(err)
	}
	c := d.tg.NewClient(t)
	for name, forge := range map[string]func(a *relayReplica, digest string) string{
		"plain URL": func(*relayReplica, string) string { return trap.URL + kernel.MCPPath },
		"another call's record": func(a *relayReplica, _ string) string {
			v, _ := gateway.SealParkedRecord(a.gw, strings.Repeat("0", 64), trap.URL+kernel.MCPPath)
			return v
		},
		"another key": func(_ *relayReplica, digest string) string {
			v, _ := other.SealFor("bulwark-gateway-parked-replica", digest, []byte(trap.URL+kernel.MCPPath), time.Minute)
			return v
		},
		"credentials in the URL": func(a *relayReplica, digest string) string {
			v, _ := gateway.SealParkedRecord(a.gw, digest, strings.Replace(trap.URL, "http://", "http://u:p@", 1)+kernel.MCPPath)
			return v
		},
		"another path": func(a *relayReplica, digest string) string {
			v, _ := gateway.SealParkedRecord(a.gw, digest, trap.URL+"/admin")
			return v
		},
	} {
		t.Run(name, func(t *testing.T) {
			a := d.replica(replicaOpts{share: true})
			state := park(t, a)
			keys := d.parkedKeys()
			if len(keys) != 1 {
				t.Fatalf("records: %v", keys)
			}
			digest := keys[0][strings.LastIndex(keys[0], ":")+1:]
			if err := c.Set(context.Background(), keys[0], forge(a, digest), time.Minute).Err(); err != nil {
				t.Fatal(err)
			}
			got := elicitCall(t, b.url, aliceKey, state, nil)
			if completed(got) || trapped.Load() != 0 || a.forwarded.Load() != 0 {
				t.Fatalf("a forged record was followed (trap %d, A %d): %s", trapped.Load(), a.forwarded.Load(), got.raw)
			}
			if !got.Result.IsError || !strings.Contains(got.text(), "no longer open") {
				t.Fatalf("B's answer: %s", got.raw)
			}
			c.Del(context.Background(), keys[0])
		})
	}
}

// deadRedis is a client of an address nothing listens on.
func deadRedis(t *testing.T) redis.UniversalClient {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	c := redis.NewClient(&redis.Options{Addr: addr, DialTimeout: 500 * time.Millisecond, MaxRetries: -1})
	t.Cleanup(func() { c.Close() })
	return c
}

// TestReplicasParkedRelayStoreDown: with the store of parked calls
// unreachable, a call whose upstream asks fails closed with
// store_unavailable on the replica that would park it (its question is not
// asked), and an answer that reaches a replica that cannot look its call
// up is refused with store_unavailable, without dialling anyone or
// spending it: the same answer then completes the call on A.
func TestReplicasParkedRelayStoreDown(t *testing.T) {
	t.Run("at park", func(t *testing.T) {
		d := newRelayDeployment(t)
		a := d.replica(replicaOpts{share: true, redis: deadRedis(t)})
		got := elicitCall(t, a.url, aliceKey, "", nil)
		e, _ := got.Result.Structured["error"].(map[string]any)
		if !got.Result.IsError || got.Result.ResultType == "input_required" || e["code"] != "store_unavailable" {
			t.Fatalf("the call on A: %s", got.raw)
		}
		if gateway.Parked(a.gw) != 0 || len(d.parkedKeys()) != 0 {
			t.Fatalf("a call is parked on A (%d)", gateway.Parked(a.gw))
		}
	})
	t.Run("at lookup", func(t *testing.T) {
		d := newRelayDeployment(t)
		a, b := d.replica(replicaOpts{share: true}), d.replica(replicaOpts{share: true, redis: deadRedis(t)})
		state := park(t, a)
		got := elicitCall(t, b.url, aliceKey, state, nil)
		if got.status != http.StatusServiceUnavailable || got.Error == nil || !strings.Contains(string(got.Error.Data), "store_unavailable") {
			t.Fatalf("the answer on B: %d %s", got.status, got.raw)
		}
		if a.forwarded.Load() != 0 || gateway.Parked(a.gw) != 1 {
			t.Fatalf("A got %d forwarded requests, %d parked", a.forwarded.Load(), gateway.Parked(a.gw))
		}
		recB := b.records()
		if len(recB) != 1 || recB[0].Outcome != audit.Refused || recB[0].ErrorCode != "store_unavailable" {
			t.Fatalf("B's records: %+v", recB)
		}
		if got := elicitCall(t, a.url, aliceKey, state, nil); !completed(got) {
			t.Fatalf("the same answer on A afterwards: %s", got.raw)
		}
	})
}

// TestReplicasParkedRelayHolderGone: the replica that holds the call is
// gone (its listener closed, its record left behind) or hangs: B answers
// with a clear error (replica_unreachable: call again without
// requestState) at once, or within the forwarding deadline, never hangs.
func TestReplicasParkedRelayHolderGone(t *testing.T) {
	t.Run("stopped", func(t *testing.T) {
		d := newRelayDeployment(t)
		a, b := d.replica(replicaOpts{share: true}), d.replica(replicaOpts{share: true})
		state := park(t, a)
		a.srv.CloseClientConnections()
		a.srv.Close()
		start := time.Now()
		got := elicitCall(t, b.url, aliceKey, state, nil)
		if got.status != http.StatusBadGateway || got.Error == nil || !strings.Contains(string(got.Error.Data), "replica_unreachable") ||
			!strings.Contains(got.Error.Message, "without requestState") || time.Since(start) > 5*time.Second {
			t.Fatalf("the answer on B after A stopped (%s): %d %s", time.Since(start), got.status, got.raw)
		}
		recB := b.records()
		if len(recB) != 1 || recB[0].Outcome != audit.Internal || recB[0].ErrorCode != "replica_unreachable" {
			t.Fatalf("B's records: %+v", recB)
		}
	})
	t.Run("hangs", func(t *testing.T) {
		d := newRelayDeployment(t)
		cfg := gateway.Config{CallTimeout: gateway.Duration(time.Second)}
		a, b := d.replica(replicaOpts{share: true}), d.replica(replicaOpts{share: true, cfg: cfg})
		gateway.SetRelayWait(b.gw, time.Second)
		state := park(t, a)
		trap := hungServer(t)
		keys := d.parkedKeys()
		digest := keys[0][strings.LastIndex(keys[0], ":")+1:]
		v, err := gateway.SealParkedRecord(a.gw, digest, trap.URL+kernel.MCPPath)
		if err != nil {
			t.Fatal(err)
		}
		if err := d.tg.NewClient(t).Set(context.Background(), keys[0], v, time.Minute).Err(); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		got := elicitCall(t, b.url, aliceKey, state, nil)
		if el := time.Since(start); got.Error == nil || !strings.Contains(string(got.Error.Data), "replica_unreachable") || el > 10*time.Second {
			t.Fatalf("the answer on B with A hanging (%s): %s", el, got.raw)
		}
	})
}

// hungServer accepts every request and never answers it (until the test
// ends).
func hungServer(t *testing.T) *httptest.Server {
	hung := make(chan struct{})
	trap := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		select {
		case <-hung:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(trap.Close)
	t.Cleanup(func() { close(hung) }) // first
	return trap
}

// TestReplicasParkedRelayFloodBudget: a flood of answers whose state does
// not open for the caller (garbage, or another principal's) costs B no
// store lookup and no dial; answers whose call has ended cost one lookup
// each and no dial.
func TestReplicasParkedRelayFloodBudget(t *testing.T) {
	d := newRelayDeployment(t)
	var lookups atomic.Int64
	client := d.tg.NewClient(t)
	client.AddHook(countHook{&lookups})
	a, b := d.replica(replicaOpts{share: true}), d.replica(replicaOpts{share: true, redis: client})
	state := park(t, a)
	var wg sync.WaitGroup
	for i := range 40 {
		wg.Go(func() {
			s := "garbage-" + strings.Repeat("x", i)
			key := aliceKey
			if i%2 == 0 {
				s, key = state, bobKey
			}
			if got := elicitCall(t, b.url, key, s, nil); !refusedState(got) {
				t.Errorf("answer %d: %s", i, got.raw)
			}
		})
	}
	wg.Wait()
	if lookups.Load() != 0 || a.forwarded.Load() != 0 || gateway.Parked(a.gw) != 1 {
		t.Fatalf("B looked up %d records, forwarded %d; A parks %d", lookups.Load(), a.forwarded.Load(), gateway.Parked(a.gw))
	}
	if got := elicitCall(t, a.url, aliceKey, state, nil); !completed(got) {
		t.Fatalf("alice's answer on A: %s", got.raw)
	}
	for range 10 {
		if got := elicitCall(t, b.url, aliceKey, state, nil); !refusedState(got) {
			t.Fatalf("a spent answer on B: %s", got.raw)
		}
	}
	if lookups.Load() != 10 || a.forwarded.Load() != 0 {
		t.Fatalf("B looked up %d records for 10 spent answers, forwarded %d", lookups.Load(), a.forwarded.Load())
	}
}

// countHook counts the lookups (GET, HGET) a client sends.
type countHook struct{ n *atomic.Int64 }

func (countHook) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h countHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if cmd.Name() == "get" || cmd.Name() == "hget" {
			h.n.Add(1)
		}
		return next(ctx, cmd)
	}
}
func (h countHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// TestReplicasParkedRelayNotShared: without ShareParked (no
// --advertise-url), the parked call lives in one replica's upstream
// session and its answer sent to another replica is refused there: with
// the confirmation store per replica, -32602 "call the tool again without
// it", with a shared one failed_precondition "no longer open"; nothing
// reaches B's upstream or A, and the call on A is untouched (it ends after
// its wait, TestRelayParkedCallTimesOut).
func TestReplicasParkedRelayNotShared(t *testing.T) {
	d := newRelayDeployment(t)
	a, b := d.replica(replicaOpts{noConf: true}), d.replica(replicaOpts{noConf: true})
	state := park(t, a)
	if len(d.parkedKeys()) != 0 {
		t.Fatal("a replica without ShareParked recorded its parked call")
	}
	got := elicitCall(t, b.url, aliceKey, state, nil)
	if !refusedState(got) {
		t.Fatalf("the answer on B: %s", got.raw)
	}
	if gateway.Parked(b.gw) != 0 || gateway.Parked(a.gw) != 1 || a.all.Load() != 1 || upstreamRan(b.records()) {
		t.Fatalf("parked: A %d, B %d; A got %d requests", gateway.Parked(a.gw), gateway.Parked(b.gw), a.all.Load())
	}

	// With a shared confirmation store B spends the answer and says the
	// question is not open there.
	a, b = d.replica(replicaOpts{}), d.replica(replicaOpts{})
	state = park(t, a)
	got = elicitCall(t, b.url, aliceKey, state, nil)
	if completed(got) || !got.Result.IsError || !strings.Contains(got.text(), "no longer open") || !strings.Contains(got.text(), "--advertise-url") {
		t.Fatalf("the answer on B, confirmation store shared: %s", got.raw)
	}
	if a.all.Load() != 1 || gateway.Parked(a.gw) != 1 || len(d.parkedKeys()) != 0 {
		t.Fatalf("A got %d requests, %d parked", a.all.Load(), gateway.Parked(a.gw))
	}
}

// TestReplicasParkedRelayHolderClosed: a gateway that stops removes the
// records of its parked calls, so an answer that reaches another replica
// afterwards is not forwarded to it: B finds no record and answers it
// itself, as a question no longer open (call again without requestState).
func TestReplicasParkedRelayHolderClosed(t *testing.T) {
	d := newRelayDeployment(t)
	a, b := d.replica(replicaOpts{share: true}), d.replica(replicaOpts{share: true})
	state := park(t, a)
	a.gw.Close()
	if keys := d.parkedKeys(); len(keys) != 0 {
		t.Fatalf("records after A stopped: %v", keys)
	}
	got := elicitCall(t, b.url, aliceKey, state, nil)
	if completed(got) || !got.Result.IsError || !strings.Contains(got.text(), "no longer open") || !strings.Contains(got.text(), "without requestState") {
		t.Fatalf("the answer on B after A stopped: %s", got.raw)
	}
	if a.forwarded.Load() != 0 || upstreamRan(b.records()) {
		t.Fatalf("forwarded to A (%d) or ran on B", a.forwarded.Load())
	}
}
