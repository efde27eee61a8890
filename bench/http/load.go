package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/bulwarkmcp/bulwark/bench/http/tool"
)

// protocolVersion is the one version all three servers accept on a
// stateless tools/call without initialize: go-sdk v1.8.0 and bulwark
// synthesize the session state for it, and the TypeScript SDK's stateless
// transport skips session checks. (2026-07-28 is go-sdk only; the
// TypeScript SDK v1 tops out at 2025-11-25.) At this version a real client
// sends no Mcp-Method / Mcp-Name headers and no _meta, so neither do we.
const protocolVersion = "2025-11-25"

// callBody is the one JSON-RPC request every client sends.
var callBody = []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + tool.Name +
	`","arguments":{"zone":"example.com","name":"www"}}}`)

// sampleEvery is how often a response is also fully decoded and checked;
// every response gets the cheap byte-level check.
const sampleEvery = 32

// loadResult is one measured interval against one server.
type loadResult struct {
	requests  int
	errors    int         // answers that were neither a valid result nor (when allowed) a 429
	refused   int         // 429 answers
	statuses  map[int]int // error answers by HTTP status (0: no HTTP answer or a bad body)
	firstErr  string
	elapsed   time.Duration
	latencies []time.Duration // every request's, unsorted
}

// runLoad drives url with clients closed-loop clients for d: each client
// sends its next request as soon as the previous one is answered and read.
// A 429 answer is counted in refused; it is also an error unless allow429.
func runLoad(ctx context.Context, hc *http.Client, url string, clients int, d time.Duration, allow429 bool) loadResult {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	parts := make([]loadResult, clients)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range clients {
		wg.Go(func() { parts[i] = client(ctx, hc, url, clients, allow429) })
	}
	wg.Wait()
	total := loadResult{elapsed: time.Since(start), statuses: map[int]int{}}
	for _, p := range parts {
		total.requests += p.requests
		total.errors += p.errors
		total.refused += p.refused
		for k, v := range p.statuses {
			total.statuses[k] += v
		}
		if total.firstErr == "" {
			total.firstErr = p.firstErr
		}
		total.latencies = append(total.latencies, p.latencies...)
	}
	return total
}

// errRefused is a 429 answer.
var errRefused = errors.New("429 Too Many Requests")

// statusError is an answer with an unexpected HTTP status.
type statusError struct {
	status int
	body   []byte
}

func (e *statusError) Error() string { return fmt.Sprintf("status %d: %.200s", e.status, e.body) }

func client(ctx context.Context, hc *http.Client, url string, clients int, allow429 bool) loadResult {
	capacity := 1 << 16 // a few seconds of latencies without growing
	if clients > 64 {
		capacity = 1 << 10
	}
	r := loadResult{latencies: make([]time.Duration, 0, capacity), statuses: map[int]int{}}
	buf := bytes.NewBuffer(make([]byte, 0, 4096))
	for n := 0; ctx.Err() == nil; n++ {
		start := time.Now()
		err := call(ctx, hc, url, buf, n%sampleEvery == 0)
		if ctx.Err() != nil {
			break // cut off by the end of the interval: not counted
		}
		r.latencies = append(r.latencies, time.Since(start))
		r.requests++
		if errors.Is(err, errRefused) {
			r.refused++
			if allow429 {
				continue
			}
		}
		if err != nil {
			r.errors++
			var se *statusError
			if errors.Is(err, errRefused) {
				r.statuses[http.StatusTooManyRequests]++
			} else if errors.As(err, &se) {
				r.statuses[se.status]++
			} else {
				r.statuses[0]++
			}
			if r.firstErr == "" {
				r.firstErr = err.Error()
			}
		}
	}
	return r
}

// call sends one tools/call with the headers a stateless client sends and
// checks that the answer is a successful tool result.
func call(ctx context.Context, hc *http.Client, url string, buf *bytes.Buffer, full bool) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(callBody))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", protocolVersion)
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	buf.Reset()
	_, err = buf.ReadFrom(resp.Body)
	resp.Body.Close()
	if err != nil {
		return err
	}
	if resp.StatusCode == http.StatusTooManyRequests {
		return errRefused
	}
	if resp.StatusCode != http.StatusOK {
		return &statusError{resp.StatusCode, bytes.Clone(buf.Bytes())}
	}
	msg, err := message(resp.Header.Get("Content-Type"), buf.Bytes())
	if err != nil {
		return err
	}
	if err := quickCheck(msg); err != nil {
		return err
	}
	if full {
		return fullCheck(msg)
	}
	return nil
}

// message returns the JSON-RPC message of a JSON answer or of the first
// data line of an SSE answer.
func message(contentType string, body []byte) ([]byte, error) {
	if len(contentType) >= 16 && contentType[:16] == "application/json" {
		return body, nil
	}
	if len(contentType) < 17 || contentType[:17] != "text/event-stream" {
		return nil, fmt.Errorf("unexpected content type %q", contentType)
	}
	for line := range bytes.Lines(body) {
		if data, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			return bytes.TrimSpace(data), nil
		}
	}
	return nil, errors.New("an SSE answer without a data line")
}

var (
	okResult   = []byte(`"result":{`)
	isErrTrue  = []byte(`"isError":true`)
	valueBytes = []byte(`"value":"` + tool.Value + `"`)
)

// quickCheck is the check every response gets: a result, not a tool error,
// carrying the tool's value.
func quickCheck(msg []byte) error {
	if !bytes.Contains(msg, okResult) || bytes.Contains(msg, isErrTrue) || !bytes.Contains(msg, valueBytes) {
		return fmt.Errorf("not a successful tool result: %.300s", msg)
	}
	return nil
}

// fullCheck decodes the message and checks every field that matters.
func fullCheck(msg []byte) error {
	var m struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   json.RawMessage `json:"error"`
		Result  struct {
			IsError bool `json:"isError"`
			Content []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
			Structured *tool.Out `json:"structuredContent"`
		} `json:"result"`
	}
	if err := json.Unmarshal(msg, &m); err != nil {
		return fmt.Errorf("decoding the answer: %w", err)
	}
	want := tool.Answer(tool.In{Zone: "example.com", Name: "www"})
	switch {
	case m.JSONRPC != "2.0" || string(m.ID) != "1" || m.Error != nil:
		return fmt.Errorf("not a JSON-RPC result for id 1: %.300s", msg)
	case m.Result.IsError || len(m.Result.Content) == 0 || m.Result.Content[0].Type != "text":
		return fmt.Errorf("not a successful text result: %.300s", msg)
	case m.Result.Structured == nil || *m.Result.Structured != want:
		return fmt.Errorf("structured content is not %+v: %.300s", want, msg)
	}
	return nil
}

// percentile returns the p-th percentile (0..100) of sorted latencies.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(p / 100 * float64(len(sorted)-1))
	return sorted[i]
}

func sortLatencies(l []time.Duration) []time.Duration { slices.Sort(l); return l }

// newHTTPClient is one keep-alive transport shared by every client, with
// one idle connection kept per client.
func newHTTPClient(clients int) *http.Client {
	return &http.Client{Transport: &http.Transport{
		MaxIdleConnsPerHost: clients,
		MaxIdleConns:        4 * clients,
		IdleConnTimeout:     time.Minute,
		DisableCompression:  true,
	}}
}
