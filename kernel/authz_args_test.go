package kernel_test

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"testing"

	"github.com/bulwarkmcp/bulwark/kernel"
	"github.com/bulwarkmcp/bulwark/kernel/authz"
	"github.com/bulwarkmcp/bulwark/kernel/confirm"
	"github.com/bulwarkmcp/bulwark/kernel/mcptest"
)

var itemType = authz.ResourceType{Name: "Test::Zone", Attrs: map[string]authz.AttrType{"zone": authz.String}}

// TestResolverCannotChangeArguments: the kernel encodes the canonical
// arguments once, before step 12, so a target resolver must not be able to
// change what the confirmation binds, the audit digests or the handler
// runs. A hostile resolver tries to rewrite the target and the payload
// through the view it is handed (with reflection, the only way the type
// leaves it); every attempt panics, and the call that runs is the call
// that was confirmed, with the digest of the arguments as sent.
func TestResolverCannotChangeArguments(t *testing.T) {
	pf := filepath.Join(t.TempDir(), "p.cedar")
	if err := os.WriteFile(pf, []byte(`@id("all") permit(principal, action, resource);`), 0o600); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var ran []recordsArgs
	var log mcptest.AuditLog
	attempts, refused := 0, 0
	try := func(f func()) {
		attempts++
		defer func() {
			if recover() != nil {
				refused++
			}
		}()
		f()
	}
	tool := kernel.NewTool(kernel.Spec[recordsArgs, map[string]int]{
		Name: "set_records", Description: "Replace records.", Policy: writePolicy(kernel.Always(kernel.Bind{Target: []string{"zone"}, Payload: []string{"records"}})),
		Handle: func(_ context.Context, _ *kernel.Call, in recordsArgs) (map[string]int, error) {
			mu.Lock()
			ran = append(ran, in)
			mu.Unlock()
			return map[string]int{"records": len(in.Records)}, nil
		},
	})
	tool = kernel.WithTarget(tool, itemType, func(_ context.Context, _ *kernel.Call, args kernel.Args) (authz.Resource, error) {
		m := reflect.ValueOf(args).Field(0) // the view's map
		try(func() { m.SetMapIndex(reflect.ValueOf("zone"), reflect.ValueOf("victim.example")) })
		try(func() { m.SetMapIndex(reflect.ValueOf("records"), reflect.ValueOf([]any{})) })
		try(func() { // a nested value: the first record's value
			m.MapIndex(reflect.ValueOf("records")).Elem().Index(0).Elem().SetMapIndex(reflect.ValueOf("value"), reflect.ValueOf("203.0.113.66"))
		})
		zone, _ := args.String("zone")
		return authz.Resource{Type: itemType.Name, ID: zone, Attrs: map[string]any{"zone": zone}}, nil
	})
	srv, err := kernel.New(kernel.Info{Name: "t", Version: "v0"}, []kernel.Tool{tool}, &kernel.Options{
		Authz:   &authz.Config{PolicyFile: pf},
		Confirm: confirm.NewIssuer(nil, &confirm.Options{Rand: &mcptest.CountingReader{}}),
		Audit:   &log,
	})
	if err != nil {
		t.Fatal(err)
	}
	sess := mcptest.Connect(t, srv, nil)
	args := map[string]any{"zone": "example.com", "records": []any{map[string]any{"value": "198.51.100.1"}}}
	tok := token(t, sess.Call(t, "set_records", args))
	if res := sess.Call(t, "set_records", with(args, "confirmToken", tok)); res.IsError {
		t.Fatalf("the confirmed call was refused: %s", mcptest.Text(res))
	}
	if attempts != 6 || refused != attempts {
		t.Fatalf("%d of %d attempts to change the arguments went through", attempts-refused, attempts)
	}
	want := recordsArgs{Zone: "example.com", Records: []record{{Value: "198.51.100.1"}}}
	if len(ran) != 1 || !reflect.DeepEqual(ran[0], want) {
		t.Fatalf("ran %+v, confirmed %+v", ran, want)
	}
	records := log.Records()
	if len(records) != 2 || records[0].ArgsDigest == "" || records[0].ArgsDigest != records[1].ArgsDigest || records[1].Authz != "allow" {
		t.Fatalf("audit records: %+v", records)
	}
	// the digest is that of the arguments as sent: another payload differs
	other := with(args, "records", []any{map[string]any{"value": "203.0.113.66"}})
	token(t, sess.Call(t, "set_records", other))
	if records = log.Records(); len(records) != 3 || records[2].ArgsDigest == records[0].ArgsDigest {
		t.Fatalf("a changed payload kept the digest: %+v", records)
	}
}
