package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/bulwarkmcp/bulwark/kernel/audit"
)

// errInvariant is the error of a run whose invariants do not hold.
var errInvariant = errors.New("an invariant does not hold")

// check verifies the invariants and writes them as a table.
func check(out io.Writer, c *loadConfig, start time.Time, l *ledger) error {
	recs, err := readAudits(c.audits)
	if err != nil {
		return err
	}
	deletes, err := upstreamDeletes(c)
	if err != nil {
		return err
	}
	present, err := rrsets(c)
	if err != nil {
		return err
	}
	var rows [][3]string
	failed := false
	row := func(name string, ok bool, detail string) {
		verdict := "holds"
		if !ok {
			verdict, failed = "BROKEN", true
		}
		rows = append(rows, [3]string{name, verdict, detail})
	}

	redeemed, issued := 0, 0
	for _, r := range recs {
		if r.Tool == "delete_rrset" && r.Confirm == audit.ConfirmRedeemed {
			redeemed++
		}
		if r.Confirm == audit.ConfirmIssued {
			issued++
		}
	}
	twice, total := 0, 0
	for _, n := range deletes {
		total += n
		if n > 1 {
			twice++
		}
	}
	replays := countKind(l, kindReplayOK)
	row("every token confirmed at most once", twice == 0 && replays == 0 && redeemed <= total,
		fmt.Sprintf("%d tokens issued, %d redeemed (audit, all replicas); %d upstream deletions of %d RRSets, none twice: %v; replays that confirmed: %d",
			issued, redeemed, total, len(deletes), twice == 0, replays))

	admitted, limited, bound := greedyCounts(recs, c, start)
	row("the rate limit counted once across replicas", admitted <= bound,
		fmt.Sprintf("the greedy principal: %d calls admitted and %d refused by the limit (audit, all replicas); at most %d fit in the windows of the run (%d a minute)", admitted, limited, bound, c.limit))

	lost, ghost := 0, 0
	l.mu.Lock()
	for name := range l.created {
		switch _, there := present[name]; {
		case l.deleted[name] && there:
			lost++
		case !l.deleted[name] && !l.unsure[name] && !there:
			ghost++
		}
	}
	acked := len(l.deleted)
	created := len(l.created)
	l.mu.Unlock()
	row("no write lost or applied twice", lost == 0 && ghost == 0 && twice == 0,
		fmt.Sprintf("%d RRSets created, %d deletions acknowledged; final zone: %d deleted RRSets still there, %d gone without an acknowledged deletion; deletions applied twice: %d",
			created, acked, lost, ghost, twice))

	fmt.Fprintln(out, "| Invariant | Verdict | From the audit records and the final zone |")
	fmt.Fprintln(out, "|---|---|---|")
	for _, r := range rows {
		fmt.Fprintf(out, "| %s | %s | %s |\n", r[0], r[1], r[2])
	}
	if failed {
		return errInvariant
	}
	return nil
}

// greedyCounts counts the greedy principal's admitted and limited calls in
// the audit records, and the most the limit lets through in the run: one
// limit per fixed window, and a window opens at most once a minute, so a
// run of d spans at most d/minute + 1 of them.
func greedyCounts(recs []audit.Record, c *loadConfig, start time.Time) (admitted, limited, bound int) {
	who := idOf(c.principals)
	for _, r := range recs {
		if r.Principal != who || r.Time.Before(start) {
			continue
		}
		switch {
		case r.Outcome == audit.RateLimited:
			limited++
		case r.ErrorCode == "store_unavailable":
		default:
			admitted++
		}
	}
	return admitted, limited, c.limit * (int(c.duration/time.Minute) + 1)
}

func countKind(l *ledger, kind string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, r := range l.results {
		if r.kind == kind {
			n++
		}
	}
	return n
}

// readAudits reads every replica's JSON-lines audit file.
func readAudits(paths []string) ([]audit.Record, error) {
	var recs []audit.Record
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return nil, err
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			var r audit.Record
			if json.Unmarshal(sc.Bytes(), &r) == nil { // a line cut by a killed replica is skipped
				recs = append(recs, r)
			}
		}
		f.Close()
		if err := sc.Err(); err != nil {
			return nil, err
		}
	}
	return recs, nil
}

// upstreamDeletes counts the fake API's DELETE requests per RRSet.
func upstreamDeletes(c *loadConfig) (map[string]int, error) {
	u, err := url.Parse(c.api)
	if err != nil {
		return nil, err
	}
	var lines []struct{ Method, Path string }
	if err := getJSON(u.Scheme+"://"+u.Host+requestsPath, &lines); err != nil {
		return nil, err
	}
	out := map[string]int{}
	prefix := u.Path + "/zones/" + c.zone + "/rrsets/"
	for _, r := range lines {
		if r.Method == http.MethodDelete && strings.HasPrefix(r.Path, prefix) {
			name, _, _ := strings.Cut(strings.TrimPrefix(r.Path, prefix), "/")
			out[name]++
		}
	}
	return out, nil
}

// rrsets lists the names of the zone's RRSets in the fake API.
func rrsets(c *loadConfig) (map[string]bool, error) {
	out := map[string]bool{}
	for page := 1; page > 0; {
		var body struct {
			RRSets []struct{ Name string } `json:"rrsets"`
			Meta   struct {
				Pagination struct {
					NextPage *int `json:"next_page"`
				} `json:"pagination"`
			} `json:"meta"`
		}
		if err := getJSON(fmt.Sprintf("%s/zones/%s/rrsets?per_page=100&page=%d", c.api, c.zone, page), &body); err != nil {
			return nil, err
		}
		for _, r := range body.RRSets {
			out[r.Name] = true
		}
		page = 0
		if n := body.Meta.Pagination.NextPage; n != nil {
			page = *n
		}
	}
	return out, nil
}

func getJSON(u string, v any) error {
	req, err := http.NewRequest("GET", u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+apiToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}
