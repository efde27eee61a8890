// Command cluster drives the three-replica deployment run of scripts/cluster:
// bulwark dns replicas behind a load balancer, sharing Redis behind
// Sentinel, their zones in one fake Hetzner DNS API.
//
//	cluster fakeapi -addr ADDR -zone NAME   serve the fake DNS API on loopback
//	cluster keys -n N -out FILE             write an --api-keys-file of N principals
//	cluster load [flags]                    run the load, the failures and the checks
//
// The load is mixed reads and confirmed writes from many API-key principals
// (each write: add an RRSet, ask to delete it, confirm with the token, replay
// the token), plus one principal that calls as fast as it can against the
// rate limit. At given offsets it runs commands (killing a replica, then the
// Redis primary) and reports the requests and errors by kind before, during
// and after each failure. Then it checks the invariants from the audit
// records of every replica and the fake's final state and request log:
// every token confirmed at most once, the rate limit counted once across
// replicas, no write lost or applied twice. It exits 1 when one fails.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/bulwarkmcp/bulwark/internal/fake/hetznerapi"
	"github.com/bulwarkmcp/bulwark/kernel/identity"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: cluster fakeapi|keys|load [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "fakeapi":
		err = runFakeAPI(os.Args[2:])
	case "keys":
		err = runKeys(os.Args[2:])
	case "load":
		err = runLoad(os.Args[2:], os.Stdout)
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "cluster:", err)
		if errors.Is(err, errInvariant) {
			os.Exit(1)
		}
		os.Exit(2)
	}
}

// apiToken is the fake DNS API's token: a loopback test value.
const apiToken = "bulwark-cluster-run-token"

// requestsPath serves the fake's request log (method and path of each
// request) for the checks; it is not part of the Hetzner API.
const requestsPath = "/debug/requests"

// runFakeAPI serves the fake Hetzner DNS API with one zone on a loopback
// address until SIGTERM.
func runFakeAPI(args []string) error {
	fs := flag.NewFlagSet("fakeapi", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:0", "loopback address to listen on")
	zone := fs.String("zone", "bulwark-load.com", "the zone to create")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if host, _, err := net.SplitHostPort(*addr); err != nil || !net.ParseIP(host).IsLoopback() {
		return fmt.Errorf("-addr %s: loopback only", *addr)
	}
	api := hetznerapi.New(&hetznerapi.Options{Token: apiToken, DisableRateLimit: true})
	if _, err := api.AddZone(hetznerapi.ZoneSeed{Name: *zone}); err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("/", api)
	mux.HandleFunc("GET "+requestsPath, func(w http.ResponseWriter, _ *http.Request) {
		type line struct{ Method, Path string }
		var out []line
		for _, r := range api.Requests() {
			out = append(out, line{r.Method, r.Path})
		}
		_ = json.NewEncoder(w).Encode(out)
	})
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	fmt.Printf("fake DNS API on http://%s%s\n", ln.Addr(), hetznerapi.BasePath)
	srv := &http.Server{Handler: mux}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	go func() { <-ctx.Done(); _ = srv.Close() }()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// keyOf is principal i's API key: derived, so that keys and load agree.
func keyOf(i int) string { return fmt.Sprintf("bulwark-cluster-key-%03d", i) }

// idOf is principal i's id; the last principal is the greedy one.
func idOf(i int) string { return fmt.Sprintf("p%03d", i) }

// runKeys writes an --api-keys-file for principals 0..n (n normal ones
// and the greedy one).
func runKeys(args []string) error {
	fs := flag.NewFlagSet("keys", flag.ContinueOnError)
	n := fs.Int("n", 20, "normal principals (one greedy principal is added)")
	out := fs.String("out", "", "the file to write")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var b strings.Builder
	for i := 0; i <= *n; i++ {
		fmt.Fprintf(&b, "%s pro %s\n", identity.HashKey(keyOf(i)), idOf(i))
	}
	if *out == "" {
		_, err := io.WriteString(os.Stdout, b.String())
		return err
	}
	return os.WriteFile(*out, []byte(b.String()), 0o600)
}
