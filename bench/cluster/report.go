package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"time"
)

// event is a command run at an offset into the load.
type event struct {
	offset time.Duration
	label  string
	cmd    string
	at     time.Time
}

// parseEvent reads OFFSET=LABEL=COMMAND.
func parseEvent(v string) (event, error) {
	parts := strings.SplitN(v, "=", 3)
	if len(parts) != 3 {
		return event{}, fmt.Errorf("-event %q: want OFFSET=LABEL=COMMAND", v)
	}
	d, err := time.ParseDuration(parts[0])
	if err != nil {
		return event{}, fmt.Errorf("-event %q: %v", v, err)
	}
	return event{offset: d, label: parts[1], cmd: parts[2]}, nil
}

type events []event

func (e *events) String() string { return fmt.Sprint(len(*e)) }
func (e *events) Set(v string) error {
	ev, err := parseEvent(v)
	if err == nil {
		*e = append(*e, ev)
	}
	return err
}

// loadConfig is what runLoad was given.
type loadConfig struct {
	url, api, zone string
	principals     int
	rate           float64
	duration       time.Duration
	limit          int
	audits         []string
	events         events
}

func runLoad(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("load", flag.ContinueOnError)
	var c loadConfig
	var audits string
	fs.StringVar(&c.url, "url", "", "the load balancer's MCP endpoint")
	fs.StringVar(&c.api, "api", "", "the fake DNS API's base URL (http://HOST:PORT/v1)")
	fs.StringVar(&c.zone, "zone", "bulwark-load.com", "the zone")
	fs.IntVar(&c.principals, "principals", 20, "normal principals")
	fs.Float64Var(&c.rate, "rate", 1, "calls a second per normal principal")
	fs.DurationVar(&c.duration, "duration", 75*time.Second, "how long the load runs")
	fs.IntVar(&c.limit, "limit", 0, "the replicas' --rate-limit (calls a minute per principal)")
	fs.StringVar(&audits, "audit", "", "comma-separated audit files of every replica")
	fs.Var(&c.events, "event", "OFFSET=LABEL=COMMAND, run by sh -c at OFFSET (repeatable)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if c.url == "" || c.api == "" || c.limit <= 0 {
		return fmt.Errorf("load needs -url, -api and -limit")
	}
	c.audits = strings.Split(audits, ",")
	start, l := drive(&c)
	time.Sleep(2 * time.Second) // calls the end of the run cut short finish and are audited
	fmt.Fprintf(out, "## Three replicas under load\n\n%d normal principals at about %.1f calls/s each and one greedy principal, %v, --rate-limit %d.\n\n",
		c.principals, c.rate, c.duration, c.limit)
	writePhases(out, start, c.events, l)
	return check(out, &c, start, l)
}

// drive runs the workers and the events, and returns when the load ends.
func drive(c *loadConfig) (time.Time, *ledger) {
	ctx, cancel := context.WithTimeout(context.Background(), c.duration)
	defer cancel()
	l := newLedger()
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	start := time.Now()
	var wg sync.WaitGroup
	for i := 0; i <= c.principals; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cl := &caller{url: c.url, key: keyOf(i), hc: hc}
			if i == c.principals {
				cl.greedy = true
				greedy(ctx, cl, c.zone, l)
				return
			}
			sleep(ctx, time.Duration(i)*time.Second/time.Duration(c.principals)) // spread the starts
			worker(ctx, cl, c.zone, c.rate, l)
		}()
	}
	for i := range c.events {
		ev := &c.events[i]
		sleep(ctx, time.Until(start.Add(ev.offset)))
		ev.at = time.Now()
		if b, err := exec.Command("sh", "-c", ev.cmd).CombinedOutput(); err != nil {
			fmt.Printf("event %s: %v %s\n", ev.label, err, b)
		}
	}
	wg.Wait()
	return start, l
}

// phase is a stretch of the run and what happened in it.
type phase struct {
	name       string
	from, to   time.Time
	counts     map[string]int
	total      int
	lastErr    time.Time
	firstErr   time.Time
	errorCount int
}

// writePhases reports, for the time before the first event and for each
// event, the calls and errors by kind: in the failure window (the event to
// its last error before the next event) and after it.
func writePhases(out io.Writer, start time.Time, evs events, l *ledger) {
	bounds := []time.Time{start}
	names := []string{"before any failure"}
	for _, ev := range evs {
		bounds = append(bounds, ev.at)
		names = append(names, ev.label)
	}
	end := time.Now()
	bounds = append(bounds, end)
	fmt.Fprintln(out, "| Phase | Calls | Errors by kind | Error window |")
	fmt.Fprintln(out, "|---|---|---|---|")
	for i := range names {
		p := tally(l, names[i], bounds[i], bounds[i+1])
		window := "none"
		if p.errorCount > 0 {
			window = fmt.Sprintf("%v after it began, for %v", p.firstErr.Sub(p.from).Round(10*time.Millisecond), p.lastErr.Sub(p.firstErr).Round(10*time.Millisecond))
			if i == 0 {
				window = fmt.Sprintf("%d errors", p.errorCount)
			}
		}
		if i > 0 {
			window += fmt.Sprintf("; recovered %v after the event", recovery(p).Round(10*time.Millisecond))
		}
		fmt.Fprintf(out, "| %s (%v–%v) | %d | %s | %s |\n", p.name, p.from.Sub(start).Round(time.Second), p.to.Sub(start).Round(time.Second),
			p.total, kinds(p.counts), window)
	}
	fmt.Fprintln(out)
	seen := map[string]bool{}
	l.mu.Lock()
	for _, r := range l.results {
		seen[r.kind] = !expected(r.kind)
	}
	l.mu.Unlock()
	var lines []string
	samples.Range(func(k, v any) bool {
		if seen[k.(string)] {
			lines = append(lines, fmt.Sprintf("- %s: %s", k, v))
		}
		return true
	})
	sort.Strings(lines)
	if len(lines) > 0 {
		fmt.Fprintf(out, "The first answer of each kind of error:\n\n%s\n\n", strings.Join(lines, "\n"))
	}
}

func tally(l *ledger, name string, from, to time.Time) phase {
	p := phase{name: name, from: from, to: to, counts: map[string]int{}}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, r := range l.results {
		if r.at.Before(from) || !r.at.Before(to) {
			continue
		}
		p.total++
		p.counts[r.kind]++
		if !expected(r.kind) {
			if p.errorCount == 0 {
				p.firstErr = r.at
			}
			p.errorCount++
			p.lastErr = r.at
		}
	}
	return p
}

// recovery is the time from the event to its last error (0 for none).
func recovery(p phase) time.Duration {
	if p.errorCount == 0 {
		return 0
	}
	return p.lastErr.Sub(p.from)
}

func kinds(m map[string]int) string {
	var ks []string
	for k, n := range m {
		if !expected(k) {
			ks = append(ks, fmt.Sprintf("%s %d", k, n))
		}
	}
	sort.Strings(ks)
	if len(ks) == 0 {
		return "none"
	}
	return strings.Join(ks, ", ")
}
