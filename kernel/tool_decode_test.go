package kernel

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"
)

// The tool input types of the repository (servers/dns, servers/rustpad,
// servers/vdb, bench), copied, and types that take each of the plan's
// refusals.
type (
	planZone struct {
		Zone string `json:"zone" jsonschema:"the zone"`
		Name string `json:"name" jsonschema:"the name"`
	}
	planList struct { // servers/dns listArgs
		Sort    []string `json:"sort,omitempty"`
		Page    int      `json:"page,omitempty"`
		PerPage int      `json:"per_page,omitempty"`
	}
	planTTL struct { // servers/dns rrsetTTLArgs, rrsetProtectionArgs
		Zone   string `json:"zone"`
		Type   string `json:"type"`
		TTL    *int   `json:"ttl"`
		Change bool   `json:"change"`
	}
	planRecord struct {
		Value   string `json:"value"`
		Comment string `json:"comment,omitempty"`
	}
	planCreate struct { // servers/dns createRRSetArgs: fields the plan leaves to encoding/json
		Zone    string            `json:"zone"`
		Records []planRecord      `json:"records"`
		TTL     *int              `json:"ttl,omitempty"`
		Labels  map[string]string `json:"labels,omitempty"`
		Types   []string          `json:"type,omitempty"`
	}
	planAction struct { // servers/dns getActionArgs, listActionsArgs
		ActionID int64    `json:"action_id"`
		Status   []string `json:"status,omitempty"`
	}
	planNamed string
	planOdd   struct {
		A     uint8       `json:"a"`
		B     int8        `json:"b"`
		F     float32     `json:"f"`
		G     float64     `json:"g"`
		U     *uint16     `json:"u"`
		N     planNamed   `json:"n"`
		L     []planNamed `json:"l"`
		P     *string     `json:"p"`
		Q     *bool
		Plain string
		Dash  string `json:"-"`
		Minus string `json:"-,"`
		Num   json.Number
		T     time.Duration `json:"t"`
		TM    *time.Time    `json:"tm"`
		Raw   json.RawMessage
		Any   any
		Bytes []byte
		Arr   [2]string
		hid   string
	}
	planNoArgs struct{}
	planQuoted struct {
		N int `json:"n,string"`
	}
	planEmbedded struct {
		planZone
		Extra string
	}
	planFolds struct {
		Name  string `json:"name"`
		Other string `json:"NAME"`
	}
)

// planTypes are the types FuzzStructPlan decodes into.
var planTypes = []reflect.Type{
	reflect.TypeFor[planZone](), reflect.TypeFor[planList](), reflect.TypeFor[planTTL](),
	reflect.TypeFor[planCreate](), reflect.TypeFor[planAction](), reflect.TypeFor[planOdd](),
	reflect.TypeFor[planNoArgs](), reflect.TypeFor[planQuoted](), reflect.TypeFor[planEmbedded](),
	reflect.TypeFor[planFolds](),
}

// checkPlan decodes raw into a t with the plan and with json.Unmarshal:
// when the plan decodes, json.Unmarshal must succeed with an equal value.
// It reports whether the plan decoded.
func checkPlan(t *testing.T, typ reflect.Type, raw string) bool {
	t.Helper()
	p := planStruct(typ)
	if p == nil {
		return false
	}
	got := reflect.New(typ)
	if !p.decode([]byte(raw), got.Elem()) {
		return false
	}
	want := reflect.New(typ)
	if err := json.Unmarshal([]byte(raw), want.Interface()); err != nil {
		t.Fatalf("%v: the plan decoded %q, which json.Unmarshal refuses: %v", typ, raw, err)
	}
	if !reflect.DeepEqual(got.Interface(), want.Interface()) {
		t.Fatalf("%v: %q\nplan:          %#v\njson.Unmarshal: %#v", typ, raw, got.Elem(), want.Elem())
	}
	return true
}

var planSeeds = []string{
	`{"name":"www","zone":"example.com"}`, `{"NAME":"www","Zone":"a"}`, `{"zone":"a","zone":"b"}`, `{"zone":"a","ZONE":"b"}`,
	`{"name":"\u0041\ud800x","zone":"<&>"}`, "{\"zone\":\"\xff\"}", `{"zone":null}`, `{"zone":1}`, ` { "zone" : "a" } `, `{"zone":"a"} x`,
	`{"page":2,"per_page":50,"sort":["name:asc",null,"ttl"]}`, `{"page":1.0}`, `{"page":1e2}`, `{"page":-0}`, `{"page":99999999999999999999}`, `{"sort":[]}`, `{"sort":null}`, `{"sort":[1]}`,
	`{"change":true,"ttl":300,"type":"A","zone":"z"}`, `{"ttl":null}`, `{"ttl":"300"}`, `{"change":"true"}`,
	`{"records":[{"value":"1.2.3.4"}],"zone":"z"}`, `{"labels":{"a":"b"},"type":["A"],"zone":"z"}`, `{"other":{"deep":[1,{"x":null}]},"zone":"z"}`,
	`{"action_id":9007199254740993,"status":["running"]}`, `{"action_id":-1}`,
	`{"a":255,"b":-128,"f":3.4028235e38,"g":1e308,"u":65535,"n":"x","l":["y",null],"p":"s","Q":false,"plain":"p","-":"m"}`, `{"a":256}`, `{"b":-129}`, `{"f":1e39}`, `{"g":1e400}`, `{"u":-1}`,
	`{"Num":12}`, `{"t":5}`, `{"tm":null}`, `{"Raw":[1]}`, `{"Any":1}`, `{"Bytes":"AA=="}`, `{"Arr":["a"]}`, `{"hid":"x","Dash":"y"}`,
	`{"ſone":"x"}`, `{"zone":"a","\u017Fone":"b"}`, `{"ZONe":"a"}`, `{"n":"12"}`, `{"Extra":"e","zone":"z"}`, `{"name":"a","NAME":"b"}`,
	`{}`, `null`, `[]`, `"x"`, ``, `{"zone":"a",}`, `{"zone" "a"}`, `{"zone":tru}`,
}

// FuzzStructPlan: whatever the typed decode's plan decodes, json.Unmarshal
// decodes to the same value, for the repository's tool input types and
// for types that take every refusal.
func FuzzStructPlan(f *testing.F) {
	for _, s := range planSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		for _, typ := range planTypes {
			checkPlan(t, typ, raw)
		}
	})
}

// TestStructPlan: the plan decodes the arguments of the repository's tools
// (so that FuzzStructPlan compares something), refuses the types it cannot
// follow, and NewTool's decode gives json.Unmarshal's value and error for
// every seed.
func TestStructPlan(t *testing.T) {
	for _, c := range []struct {
		typ reflect.Type
		raw string
	}{
		{reflect.TypeFor[planZone](), `{"name":"www","zone":"example.com"}`},
		{reflect.TypeFor[planZone](), `{"Name":"w\u0077w","ZONE":"<&>"}`},
		{reflect.TypeFor[planList](), `{"page":2,"per_page":50,"sort":["name:asc",null]}`},
		{reflect.TypeFor[planList](), `{"sort":[]}`},
		{reflect.TypeFor[planTTL](), `{"change":true,"ttl":300,"type":"A","zone":"z"}`},
		{reflect.TypeFor[planTTL](), `{"ttl":null,"zone":"z"}`},
		{reflect.TypeFor[planCreate](), `{"other":{"deep":[1,{"x":null}]},"ttl":5,"zone":"z"}`},
		{reflect.TypeFor[planAction](), `{"action_id":9007199254740993,"status":["running"]}`},
		{reflect.TypeFor[planOdd](), `{"a":255,"b":-128,"f":3.5,"g":1e308,"u":65535,"n":"x","l":["y",null],"p":"s","Q":false,"plain":"p","-":"m"}`},
		{reflect.TypeFor[planNoArgs](), `{"x":1}`},
	} {
		if !checkPlan(t, c.typ, c.raw) {
			t.Errorf("%v: the plan does not decode %s", c.typ, c.raw)
		}
	}
	for _, typ := range []reflect.Type{reflect.TypeFor[planQuoted](), reflect.TypeFor[planEmbedded](), reflect.TypeFor[planFolds](), reflect.TypeFor[map[string]any](), reflect.TypeFor[time.Time]()} {
		if planStruct(typ) != nil {
			t.Errorf("%v: planned", typ)
		}
	}
	decode := NewTool(Spec[planOdd, Text]{Name: "t", Handle: func(ctx context.Context, c *Call, in planOdd) (Text, error) { return "", nil }}).decode
	for _, raw := range planSeeds {
		got, gotErr := decode(json.RawMessage(raw))
		var want planOdd
		wantErr := json.Unmarshal([]byte(raw), &want)
		if len(raw) == 0 {
			wantErr = nil
		}
		if gotErr == nil {
			got = *got.(*planOdd)
		}
		if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) || gotErr == nil && !reflect.DeepEqual(got, want) {
			t.Errorf("decode(%q) = %#v, %v; json.Unmarshal: %#v, %v", raw, got, gotErr, want, wantErr)
		}
	}
}
