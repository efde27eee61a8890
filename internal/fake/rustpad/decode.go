package rustpad

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/bulwarkmcp/bulwark/servers/rustpad/ot"
)

// clientMsg is one decoded ClientMsg; kind names the variant.
type clientMsg struct {
	kind     string
	revision uint64
	op       *ot.Operation
	language string
	user     userInfo
	cursor   cursorData
}

var errReject = errors.New("message rejected")

func reject(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errReject, fmt.Sprintf(format, args...))
}

// decodeClient decodes a text frame as serde would decode ClientMsg.
func decodeClient(frame []byte) (clientMsg, error) {
	var m clientMsg
	if !ot.ValidText(frame) {
		return m, reject("invalid utf-8 or lone surrogate")
	}
	top, err := object(frame)
	if err != nil {
		return m, err
	}
	if len(top) != 1 {
		return m, reject("want exactly one variant, got %d keys", len(top))
	}
	for k, v := range top {
		m.kind = k
		err = decodeVariant(&m, k, v)
	}
	return m, err
}

func decodeVariant(m *clientMsg, kind string, v json.RawMessage) error {
	switch kind {
	case "Edit":
		return decodeEdit(m, v)
	case "SetLanguage":
		s, err := str(v)
		m.language = s
		return err
	case "ClientInfo":
		return decodeClientInfo(m, v)
	case "CursorData":
		c, err := decodeCursorData(v)
		m.cursor = c
		return err
	}
	return reject("unknown variant %q", kind)
}

func decodeEdit(m *clientMsg, v json.RawMessage) error {
	f, err := fields(v, "revision", "operation")
	if err != nil {
		return err
	}
	if m.revision, err = uintValue(f["revision"], math.MaxUint64); err != nil {
		return err
	}
	m.op, err = ot.Parse(f["operation"])
	return err
}

func decodeClientInfo(m *clientMsg, v json.RawMessage) error {
	f, err := fields(v, "name", "hue")
	if err != nil {
		return err
	}
	if m.user.name, err = str(f["name"]); err != nil {
		return err
	}
	hue, err := uintValue(f["hue"], math.MaxUint32)
	m.user.hue = uint32(hue)
	return err
}

func decodeCursorData(v json.RawMessage) (cursorData, error) {
	var c cursorData
	f, err := fields(v, "cursors", "selections")
	if err != nil {
		return c, err
	}
	cs, err := array(f["cursors"])
	if err != nil {
		return c, err
	}
	c.cursors = make([]uint32, len(cs))
	for i, e := range cs {
		if c.cursors[i], err = u32(e); err != nil {
			return c, err
		}
	}
	ss, err := array(f["selections"])
	if err != nil {
		return c, err
	}
	c.selections = make([][2]uint32, len(ss))
	for i, e := range ss {
		if c.selections[i], err = pair(e); err != nil {
			return c, err
		}
	}
	return c, nil
}

func pair(v json.RawMessage) ([2]uint32, error) {
	var p [2]uint32
	es, err := array(v)
	if err != nil || len(es) != 2 {
		return p, reject("selection is not a pair")
	}
	for i := range p {
		if p[i], err = u32(es[i]); err != nil {
			return p, err
		}
	}
	return p, nil
}

// object decodes a JSON object, rejecting duplicate keys and trailing data.
func object(v []byte) (map[string]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(v))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, reject("not an object")
	}
	out := map[string]json.RawMessage{}
	for dec.More() {
		t, err := dec.Token()
		key, ok := t.(string)
		if err != nil || !ok {
			return nil, reject("bad object key")
		}
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return nil, reject("bad object value")
		}
		if _, dup := out[key]; dup {
			return nil, reject("duplicate key %q", key)
		}
		out[key] = val
	}
	if _, err := dec.Token(); err != nil {
		return nil, reject("unterminated object")
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, reject("trailing data")
	}
	return out, nil
}

// fields decodes a struct: every name is required, unknown fields ignored.
func fields(v json.RawMessage, names ...string) (map[string]json.RawMessage, error) {
	obj, err := object(v)
	if err != nil {
		return nil, err
	}
	for _, n := range names {
		if _, ok := obj[n]; !ok {
			return nil, reject("missing field %q", n)
		}
	}
	return obj, nil
}

func str(v json.RawMessage) (string, error) {
	var s string
	if len(v) == 0 || v[0] != '"' || json.Unmarshal(v, &s) != nil {
		return "", reject("not a string")
	}
	return s, nil
}

func array(v json.RawMessage) ([]json.RawMessage, error) {
	var a []json.RawMessage
	if len(v) == 0 || v[0] != '[' || json.Unmarshal(v, &a) != nil {
		return nil, reject("not an array")
	}
	return a, nil
}

func u32(v json.RawMessage) (uint32, error) {
	n, err := uintValue(v, math.MaxUint32)
	return uint32(n), err
}

// uintValue accepts a JSON integer in [0, max]: no sign, fraction or exponent.
func uintValue(v json.RawMessage, max uint64) (uint64, error) {
	v = bytes.TrimSpace(v)
	if len(v) == 0 || v[0] < '0' || v[0] > '9' || bytes.ContainsAny(v, ".eE") {
		return 0, reject("not an unsigned integer")
	}
	n, err := strconv.ParseUint(string(v), 10, 64)
	if err != nil || n > max {
		return 0, reject("integer out of range")
	}
	return n, nil
}
