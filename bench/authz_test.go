package bench

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/authz"
	"github.com/bulwarkmcp/bulwark/kernel/mcptest"
)

var benchZone = authz.ResourceType{Name: "Dns::Zone", Attrs: map[string]authz.AttrType{"zone": authz.String, "id": authz.String, "nameLabels": authz.StringSet}}

// benchPolicy is a realistic file: delegations, a read-only group, typed
// argument rules, a break-glass admin, an agent rule.
const benchPolicy = `
@id("team-a") permit(principal in Group::"team-a", action, resource is Dns::Zone) when { resource.zone like "*.team-a.example" };
@id("team-b") permit(principal in Group::"team-b", action, resource is Dns::Zone) when { resource.zone like "*.team-b.example" };
@id("local") permit(principal == User::"local", action, resource is Dns::Zone) when { resource.zone like "*.example.com" || resource.zone == "example.com" };
@id("readers") permit(principal in Group::"readers", action in Action::"readOnly", resource);
@id("break-glass") permit(principal in Group::"break-glass", action, resource) when { context.transport == "stdio" };
@id("no-ns") forbid(principal, action, resource) when { context.arguments has name && context.arguments.name == "ns-forbidden" };
@id("agents-confirm") forbid(principal in Group::"agents", action in Action::"destructive", resource) unless { context.confirmed };
@id("quiet-hours") forbid(principal in Group::"night-shift", action in Action::"write", resource) when { context.time < 0 };
`

const benchEntities = `[{"uid": {"type": "User", "id": "local"}, "parents": [{"type": "Group", "id": "readers"}], "attrs": {}}]`

// authzKernelServer is kernelServer's tool with a target (the zone, put in
// canonical form without a provider read) and, when policy is set, the
// policy file in force.
func authzKernelServer(tb testing.TB, policy bool) mcptest.Server {
	if !policy {
		return authzKernel(tb, "")
	}
	return authzKernel(tb, benchPolicy)
}

// permitAllPolicy lets every call through without reading anything: the
// authorization step (target resolution, the request, a decision answered
// from the memo) with next to no policy work.
const permitAllPolicy = `@id("all") permit(principal, action, resource);`

// benchZones caches benchZoneResource, as the DNS server caches its zones'
// resources.
var benchZones authz.ResourceCache

// benchZoneResource puts a zone in canonical form without a provider read.
func benchZoneResource(zone string, _ int64) authz.Resource {
	z := strings.ToLower(strings.TrimSuffix(zone, "."))
	return authz.Resource{Type: benchZone.Name, ID: z, Attrs: map[string]any{"zone": z, "id": "", "nameLabels": strings.Split(z, ".")}}
}

// policyFiles writes policy (Cedar text) and benchEntities to files of a
// temporary directory and returns the configuration that loads them.
func policyFiles(tb testing.TB, policy string) *authz.Config {
	dir := tb.TempDir()
	pf, ef := filepath.Join(dir, "p.cedar"), filepath.Join(dir, "e.json")
	if err := os.WriteFile(pf, []byte(policy), 0o600); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(ef, []byte(benchEntities), 0o600); err != nil {
		tb.Fatal(err)
	}
	return &authz.Config{PolicyFile: pf, EntitiesFile: ef}
}

// authzKernel is authzKernelServer's kernel server, with policy (Cedar
// text) in force unless it is empty.
func authzKernel(tb testing.TB, policy string) *kernel.Server {
	tool := kernel.NewTool(kernel.Spec[echoIn, echoOut]{
		Name: "get_rrset", Description: "Get an RRSet.",
		Policy: kernel.Policy{ReadOnly: kernel.Yes, Destructive: kernel.No, Idempotent: kernel.Yes, OpenWorld: kernel.Yes, Confirm: kernel.Never, Tier: kernel.Open},
		Handle: func(ctx context.Context, c *kernel.Call, in echoIn) (echoOut, error) { return echo(in), nil },
	})
	tool = kernel.WithTarget(tool, benchZone, func(_ context.Context, _ *kernel.Call, args kernel.Args) (authz.Resource, error) {
		zone, _ := args.String("zone")
		return benchZones.Get(zone, 0, benchZoneResource), nil
	})
	opts := &kernel.Options{Envelope: kernelEnvelope}
	tools := []kernel.Tool{tool, destructiveTool()}
	if policy != "" {
		opts.Authz = policyFiles(tb, policy)
	}
	s, err := kernel.New(kernel.Info{Name: "kernel", Version: "v0"}, tools, opts)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// BenchmarkAuthzToolCall measures one tools/call round trip in process
// through the go-sdk's in-memory transport and the kernel, without a policy
// and with an eight-policy file in force (the call is allowed, so the
// handler runs in both), interleaved. The SDK's transport costs far more
// than the kernel's path over HTTP; BenchmarkAuthzHTTPCall
// (authz_http_test.go) is the stricter measure of issue 11's bound.
func BenchmarkAuthzToolCall(b *testing.B) {
	ctx := context.Background()
	plain, withPolicy := connect(b, authzKernelServer(b, false)), connect(b, authzKernelServer(b, true))
	params := &mcp.CallToolParams{Name: "get_rrset", Arguments: map[string]any{"zone": "Example.com.", "name": "www"}}
	call := func(cs *mcp.ClientSession) time.Duration {
		start := time.Now()
		res, err := cs.CallTool(ctx, params)
		if err != nil || res.IsError {
			b.Fatalf("call failed: %v %+v", err, res)
		}
		return time.Since(start)
	}
	for range 200 {
		call(plain)
		call(withPolicy)
	}
	var tp, ta time.Duration
	var sp, sa []time.Duration
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		var p, a time.Duration
		if i%2 == 0 {
			p = call(plain)
			a = call(withPolicy)
		} else {
			a = call(withPolicy)
			p = call(plain)
		}
		tp, ta = tp+p, ta+a
		sp, sa = append(sp, p), append(sa, a)
	}
	n := float64(b.N)
	b.ReportMetric(float64(tp.Nanoseconds())/n, "plain-ns/call")
	b.ReportMetric(float64(ta.Nanoseconds())/n, "authz-ns/call")
	b.ReportMetric(float64(ta)/float64(tp), "authz/plain")
	// the medians resist the bursts of a shared machine better than means
	b.ReportMetric(float64(median(sa))/float64(median(sp)), "median-authz/plain")
}

// BenchmarkAuthzToolCallCPU is BenchmarkAuthzToolCall measured in process
// CPU time (user + system) over alternating blocks of 50 calls, which a
// loaded machine's scheduling disturbs far less than latency.
func BenchmarkAuthzToolCallCPU(b *testing.B) {
	ctx := context.Background()
	plain, withPolicy := connect(b, authzKernelServer(b, false)), connect(b, authzKernelServer(b, true))
	params := &mcp.CallToolParams{Name: "get_rrset", Arguments: map[string]any{"zone": "Example.com.", "name": "www"}}
	block := func(cs *mcp.ClientSession) time.Duration {
		start := cpuTime()
		for range 50 {
			if res, err := cs.CallTool(ctx, params); err != nil || res.IsError {
				b.Fatalf("call failed: %v", err)
			}
		}
		return cpuTime() - start
	}
	for range 4 {
		block(plain)
		block(withPolicy)
	}
	var tp, ta time.Duration
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if i%2 == 0 {
			tp += block(plain)
			ta += block(withPolicy)
		} else {
			ta += block(withPolicy)
			tp += block(plain)
		}
	}
	n := float64(b.N * 50)
	b.ReportMetric(float64(tp.Nanoseconds())/n, "plain-cpu-ns/call")
	b.ReportMetric(float64(ta.Nanoseconds())/n, "authz-cpu-ns/call")
	b.ReportMetric(float64(ta)/float64(tp), "cpu-authz/plain")
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func median(d []time.Duration) time.Duration {
	d = slices.Clone(d)
	slices.Sort(d)
	return d[len(d)/2]
}

// BenchmarkAuthzDecide is the decision alone, for orientation.
func BenchmarkAuthzDecide(b *testing.B) {
	tool := kernel.NewTool(kernel.Spec[echoIn, echoOut]{Name: "get_rrset", Description: "x",
		Policy: kernel.Policy{ReadOnly: kernel.Yes, Destructive: kernel.No, Idempotent: kernel.Yes, OpenWorld: kernel.Yes, Confirm: kernel.Never, Tier: kernel.Open},
		Handle: func(ctx context.Context, c *kernel.Call, in echoIn) (echoOut, error) { return echo(in), nil }})
	tool = kernel.WithTarget(tool, benchZone, func(context.Context, *kernel.Call, kernel.Args) (authz.Resource, error) {
		return authz.Resource{}, nil
	})
	s, err := kernel.New(kernel.Info{Name: "kernel"}, []kernel.Tool{tool, destructiveTool()}, &kernel.Options{Authz: policyFiles(b, benchPolicy)})
	if err != nil {
		b.Fatal(err)
	}
	req := authz.Request{Principal: authz.Principal{ID: "local", Auth: "none"}, Action: "get_rrset", Transport: "stdio", Time: time.Now(),
		Resource:  authz.Resource{Type: benchZone.Name, ID: "example.com", Attrs: map[string]any{"zone": "example.com", "id": "", "nameLabels": []string{"example", "com"}}},
		Arguments: map[string]any{"zone": "example.com", "name": "www"}}
	b.Run("repeated", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if !s.Authorizer().Decide(req).Allow {
				b.Fatal("denied")
			}
		}
	})
	b.Run("distinct", func(b *testing.B) { // no answer from the memo
		names := make([]string, 10000)
		for i := range names {
			names[i] = "w" + strconv.Itoa(i)
		}
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			req.Arguments = map[string]any{"zone": "example.com", "name": names[i%len(names)]}
			if !s.Authorizer().Decide(req).Allow {
				b.Fatal("denied")
			}
		}
	})
}

// destructiveTool is a write tool beside the read one, so that the policy
// file's rules about writes apply to something (the validator refuses a
// policy that can apply to no action).
func destructiveTool() kernel.Tool {
	return kernel.NewTool(kernel.Spec[echoIn, echoOut]{Name: "delete_rrset", Description: "Delete an RRSet.",
		Policy: kernel.Policy{ReadOnly: kernel.No, Destructive: kernel.Yes, Idempotent: kernel.Yes, OpenWorld: kernel.Yes, Confirm: kernel.Never, Tier: kernel.Open},
		Handle: func(ctx context.Context, c *kernel.Call, in echoIn) (echoOut, error) { return echo(in), nil }})
}
