package hetznerapi

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// resp is a decoded answer.
type resp struct {
	status int
	header http.Header
	raw    []byte
	body   map[string]any
}

// errCode is error.code of an error answer, "" otherwise.
func (r resp) errCode() string {
	e, _ := r.body["error"].(map[string]any)
	c, _ := e["code"].(string)
	return c
}

// get walks dotted keys through objects ("zone.record_count").
func (r resp) get(path string) any {
	var cur any = r.body
	for _, k := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[k]
	}
	return cur
}

func (r resp) num(path string) int {
	f, _ := r.get(path).(float64)
	return int(f)
}

func (r resp) str(path string) string {
	s, _ := r.get(path).(string)
	return s
}

// do sends a request with the fake's token.
func do(t *testing.T, s *Server, method, path string, body any) resp {
	t.Helper()
	return doTok(t, s, "Bearer "+s.Token(), method, path, body)
}

// doTok sends a request with the given Authorization value ("" = none).
func doTok(t *testing.T, s *Server, auth, method, path string, body any) resp {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, s.URL()+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	r := resp{status: res.StatusCode, header: res.Header, raw: raw}
	_ = json.Unmarshal(raw, &r.body)
	return r
}

// want fails unless r has status and (if code != "") error code.
func want(t *testing.T, r resp, status int, code string) {
	t.Helper()
	if r.status != status || r.errCode() != code {
		t.Fatalf("got %d %q, want %d %q; body %s", r.status, r.errCode(), status, code, r.raw)
	}
}

// newPrimary starts a fake with one primary zone example.com.
func newPrimary(t *testing.T, opts *Options) (*Server, Zone) {
	t.Helper()
	s := Start(t, opts)
	z, err := s.AddZone(ZoneSeed{Name: "example.com"})
	if err != nil {
		t.Fatal(err)
	}
	return s, z
}

func mustRRSet(t *testing.T, s *Server, zone string, seed RRSetSeed) {
	t.Helper()
	if _, err := s.AddRRSet(zone, seed); err != nil {
		t.Fatal(err)
	}
}

func recs(values ...string) []Record {
	out := make([]Record, len(values))
	for i, v := range values {
		out[i] = Record{Value: v}
	}
	return out
}

func ttlp(v int) *int { return &v }
