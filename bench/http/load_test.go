package main

import (
	"bytes"
	"testing"
	"time"
)

// Answers as each server sends them (taken from the three servers).
const (
	bulwarkAnswer = `{"jsonrpc":"2.0","id":1,"result":{"_meta":{"bulwark/untrusted":{"source":""}},"content":[{"type":"text","text":"\u003cuntrusted-data source=\"upstream\"\u003e\n{\"zone\":\"example.com\",\"name\":\"www\",\"ttl\":300,\"value\":\"198.51.100.7\"}\n\u003c/untrusted-data\u003e"}],"structuredContent":{"zone":"example.com","name":"www","ttl":300,"value":"198.51.100.7"}}}`
	bareAnswer    = "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"{}\"}],\"structuredContent\":{\"name\":\"www\",\"ttl\":300,\"value\":\"198.51.100.7\",\"zone\":\"example.com\"}}}\n\n"
	tsAnswer      = "event: message\ndata: {\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"{}\"}],\"structuredContent\":{\"zone\":\"example.com\",\"name\":\"www\",\"ttl\":300,\"value\":\"198.51.100.7\"}},\"jsonrpc\":\"2.0\",\"id\":1}\n\n"
)

func TestAnswerChecks(t *testing.T) {
	tests := []struct {
		name, contentType, body string
		ok                      bool
	}{
		{"bulwark JSON", "application/json", bulwarkAnswer, true},
		{"bare SSE", "text/event-stream", bareAnswer, true},
		{"ts SSE", "text/event-stream", tsAnswer, true},
		{"tool error", "application/json", `{"jsonrpc":"2.0","id":1,"result":{"isError":true,"content":[{"type":"text","text":"x"}],"structuredContent":{"value":"198.51.100.7"}}}`, false},
		{"JSON-RPC error", "application/json", `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"unknown tool"}}`, false},
		{"wrong value", "application/json", `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"x"}],"structuredContent":{"zone":"example.com","name":"www","ttl":300,"value":"203.0.113.1"}}}`, false},
		{"wrong id", "application/json", `{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"x"}],"structuredContent":{"zone":"example.com","name":"www","ttl":300,"value":"198.51.100.7"}}}`, false},
		{"SSE without data", "text/event-stream", "event: message\n\n", false},
		{"HTML", "text/html", "<html>", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msg, err := message(tt.contentType, []byte(tt.body))
			if err == nil {
				err = quickCheck(msg)
			}
			if err == nil {
				err = fullCheck(msg)
			}
			if (err == nil) != tt.ok {
				t.Fatalf("ok = %v, want %v (err %v)", err == nil, tt.ok, err)
			}
		})
	}
}

func TestPercentile(t *testing.T) {
	var l []time.Duration
	for i := 100; i >= 1; i-- {
		l = append(l, time.Duration(i)*time.Millisecond)
	}
	l = sortLatencies(l)
	if p := percentile(l, 50); p != 50*time.Millisecond {
		t.Errorf("p50 = %v", p)
	}
	if p := percentile(l, 99); p != 99*time.Millisecond {
		t.Errorf("p99 = %v", p)
	}
	if p := percentile(nil, 99); p != 0 {
		t.Errorf("empty p99 = %v", p)
	}
}

func TestKiB(t *testing.T) {
	if got := kib("   36912 kB\n"); got != 36912<<10 {
		t.Fatalf("kib = %d", got)
	}
}

// FuzzMessage checks that extracting the JSON-RPC message never panics and
// always returns a part of the body.
func FuzzMessage(f *testing.F) {
	f.Add("text/event-stream", []byte(bareAnswer))
	f.Add("application/json", []byte(bulwarkAnswer))
	f.Add("text/event-stream; charset=utf-8", []byte("data:\r\ndata: x"))
	f.Fuzz(func(t *testing.T, contentType string, body []byte) {
		msg, err := message(contentType, body)
		if err != nil {
			return
		}
		if len(msg) > 0 && !bytes.Contains(body, msg) {
			t.Fatalf("message %q is not part of the body", msg)
		}
		_ = quickCheck(msg)
		_ = fullCheck(msg)
	})
}

func TestIsNode22(t *testing.T) {
	for v, want := range map[string]bool{"v22.23.3": true, "v22.0.0": true, "v20.20.2": false, "v23.1.0": false, "v2.2.0": false, "": false} {
		if got := isNode22(v); got != want {
			t.Errorf("isNode22(%q) = %v", v, got)
		}
	}
}
