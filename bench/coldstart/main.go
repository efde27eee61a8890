// Command coldstart measures stdio cold start: the time from starting a
// server process to reading its answer to `initialize` on stdout, for
// `bulwark dns` (the local zone store, the DNS responder off, an empty data
// directory) and for a bare go-sdk server with the same number of tools
// (./bare; and the same with one tool, a stricter yardstick), built from
// this tree, in alternating order so that the
// machine's drift falls on both. After the answer it closes stdin and waits
// for the process to exit; that whole lifetime is reported too.
//
// Run it from the repository root:
//
//	go run ./bench/coldstart [-runs 40] [-before /path/to/older/bulwark]
//
// -before adds an older bulwark binary as a third contestant (the figures
// before a change). It prints min / median / max of each, and the median
// of the pairwise ratios bulwark / bare (the figure issue 12 bounds at 1.5).
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"coldstart","version":"1"}}}` + "\n"

type contestant struct {
	name  string
	argv  []string
	first []time.Duration // to the first response
	whole []time.Duration // to exit
}

func main() {
	runs := flag.Int("runs", 40, "runs of each server")
	before := flag.String("before", "", "an older bulwark binary to measure beside (optional)")
	flag.Parse()
	if err := run(*runs, *before); err != nil {
		fmt.Fprintln(os.Stderr, "coldstart:", err)
		os.Exit(1)
	}
}

func run(runs int, before string) error {
	dir, err := os.MkdirTemp("", "coldstart")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bin := func(name string) string { return filepath.Join(dir, name) }
	for name, pkg := range map[string]string{"bulwark": "./cmd/bulwark", "bare": "./bench/coldstart/bare"} {
		if out, err := exec.Command("go", "build", "-o", bin(name), pkg).CombinedOutput(); err != nil {
			return fmt.Errorf("building %s: %v\n%s", pkg, err, out)
		}
	}
	zones := filepath.Join(dir, "zones")
	if err := os.Mkdir(zones, 0o700); err != nil {
		return err
	}
	dnsArgs := []string{"dns", "--data-dir", zones, "--dns-listen", "off", "--log-level", "warn"}
	cs := []*contestant{
		{name: "bulwark dns", argv: append([]string{bin("bulwark")}, dnsArgs...)},
		{name: "bare go-sdk", argv: []string{bin("bare")}},
		{name: "bare go-sdk, 1 tool", argv: []string{bin("bare"), "-one"}},
	}
	if before != "" {
		cs = append(cs, &contestant{name: "bulwark dns (before)", argv: append([]string{before}, dnsArgs...)})
	}
	for _, c := range cs { // warm the page cache
		if _, _, err := once(c.argv); err != nil {
			return fmt.Errorf("%s: %w", c.name, err)
		}
	}
	for i := range runs {
		order := slices.Clone(cs)
		if i%2 == 1 {
			slices.Reverse(order)
		}
		for _, c := range order {
			first, whole, err := once(c.argv)
			if err != nil {
				return fmt.Errorf("%s: %w", c.name, err)
			}
			c.first, c.whole = append(c.first, first), append(c.whole, whole)
		}
	}
	report(cs)
	return nil
}

// once starts argv, sends initialize, and times the first line of output
// and the exit after stdin closes.
func once(argv []string) (first, whole time.Duration, err error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.TempDir()} // no secrets: no re-exec
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return 0, 0, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return 0, 0, err
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, 0, err
	}
	if _, err := io.WriteString(stdin, initialize); err != nil {
		return 0, 0, err
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	first = time.Since(start)
	if err != nil || !strings.Contains(line, `"protocolVersion"`) {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return 0, 0, fmt.Errorf("no initialize result (%v): %q %s", err, line, stderr.String())
	}
	_ = stdin.Close()
	_, _ = io.Copy(io.Discard, stdout)
	if err := cmd.Wait(); err != nil {
		return 0, 0, fmt.Errorf("exit: %v: %s", err, stderr.String())
	}
	return first, time.Since(start), nil
}

func report(cs []*contestant) {
	fmt.Printf("%d runs each, alternating order\n", len(cs[0].first))
	fmt.Printf("%-22s %28s %28s\n", "", "to first response (min/med/max)", "to exit (min/med/max)")
	for _, c := range cs {
		fmt.Printf("%-22s %28s %28s\n", c.name, spread(c.first), spread(c.whole))
	}
	fmt.Println("median of pairwise ratios (to first response, to exit):")
	for _, c := range cs {
		if !strings.HasPrefix(c.name, "bulwark") {
			continue
		}
		for _, base := range cs[1:3] {
			fmt.Printf("  %s / %s: %.2f, %.2f\n", c.name, base.name, pairRatio(c.first, base.first), pairRatio(c.whole, base.whole))
		}
	}
}

func spread(ds []time.Duration) string {
	s := slices.Clone(ds)
	slices.Sort(s)
	ms := func(d time.Duration) string { return fmt.Sprintf("%.1f", float64(d)/1e6) }
	return ms(s[0]) + " / " + ms(s[len(s)/2]) + " / " + ms(s[len(s)-1]) + " ms"
}

func pairRatio(a, b []time.Duration) float64 {
	r := make([]float64, len(a))
	for i := range a {
		r[i] = float64(a[i]) / float64(b[i])
	}
	slices.Sort(r)
	return r[len(r)/2]
}
