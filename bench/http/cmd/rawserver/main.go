// Command rawserver is the ceiling of the HTTP load benchmark
// (go run ./bench/http): plain net/http that reads the request body and
// writes back a fixed answer, the bytes bulwark's fast path sends for the
// benchmark's tools/call (the same JSON, Content-Type application/json). It
// parses nothing and checks nothing: it measures what the HTTP stack, the
// loopback and the load generator cost on their own, so that a server's
// ratio to it says how much of the time is the server's own work.
//
// It runs with the Go runtime's default GC settings and prints
// "READY <url>" on stdout once it listens.
package main

import (
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
)

// answer is bulwark's answer to the benchmark's call (bench/http's
// load_test.go holds the same bytes as bulwarkAnswer).
const answer = `{"jsonrpc":"2.0","id":1,"result":{"_meta":{"bulwark/untrusted":{"source":""}},"content":[{"type":"text","text":"\u003cuntrusted-data source=\"upstream\"\u003e\n{\"zone\":\"example.com\",\"name\":\"www\",\"ttl\":300,\"value\":\"198.51.100.7\"}\n\u003c/untrusted-data\u003e"}],"structuredContent":{"zone":"example.com","name":"www","ttl":300,"value":"198.51.100.7"}}}`

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	flag.Parse()
	body := []byte(answer)
	length := strconv.Itoa(len(body))
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.Copy(io.Discard, r.Body); err != nil {
			return
		}
		hd := w.Header()
		hd["Content-Type"] = []string{"application/json"}
		hd["Content-Length"] = []string{length}
		_, _ = w.Write(body)
	})
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "rawserver:", err)
		os.Exit(1)
	}
	fmt.Println("READY http://" + ln.Addr().String() + "/mcp")
	if err := (&http.Server{Handler: h}).Serve(ln); err != nil {
		fmt.Fprintln(os.Stderr, "rawserver:", err)
		os.Exit(1)
	}
}
