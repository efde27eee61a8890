package session

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/bulwarkmcp/bulwark/servers/rustpad/ot"
)

type msgKind uint8

const (
	kindIdentity msgKind = iota + 1
	kindHistory
	kindLanguage
	kindUserInfo
	kindUserCursor
)

// entry is one operation of a History, with its author's connection id.
type entry struct {
	id uint64
	op *ot.Operation
}

// message is one decoded ServerMsg.
type message struct {
	kind    msgKind
	id      uint64 // Identity, UserInfo, UserCursor
	start   uint64 // History
	entries []entry
	text    string // Language
	user    *User  // UserInfo; nil when the user left
	size    int64  // frame bytes, for the queue budget
}

func protocolErr(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrProtocol, fmt.Sprintf(format, args...))
}

func historyErr(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrMalformedHistory, fmt.Sprintf(format, args...))
}

// decode parses one text frame strictly: one externally tagged variant with
// every required field, u64 ids, no floats, nulls only where allowed.
func decode(frame []byte) (message, error) {
	m := message{size: int64(len(frame))}
	top, err := object(frame)
	if err != nil || len(top) != 1 {
		return m, protocolErr("not a single-variant message")
	}
	for k, v := range top {
		if !ot.ValidText(v) {
			if k == "History" {
				return m, historyErr("invalid utf-8 or lone surrogate")
			}
			return m, protocolErr("invalid utf-8 or lone surrogate in %s", k)
		}
		err = decodeVariant(&m, k, v)
	}
	return m, err
}

func decodeVariant(m *message, kind string, v json.RawMessage) error {
	var err error
	switch kind {
	case "Identity":
		m.kind = kindIdentity
		m.id, err = uintValue(v, math.MaxUint64)
	case "History":
		m.kind = kindHistory
		return decodeHistory(m, v)
	case "Language":
		m.kind = kindLanguage
		m.text, err = str(v)
	case "UserInfo":
		m.kind = kindUserInfo
		err = decodeUserInfo(m, v)
	case "UserCursor":
		m.kind = kindUserCursor
		err = decodeUserCursor(m, v)
	default:
		return protocolErr("unknown message %.40q", kind)
	}
	if err != nil {
		return protocolErr("%s: %v", kind, err)
	}
	return nil
}

func decodeHistory(m *message, v json.RawMessage) error {
	f, err := fields(v, "start", "operations")
	if err != nil {
		return historyErr("%v", err)
	}
	if m.start, err = uintValue(f["start"], math.MaxInt); err != nil {
		return historyErr("start: %v", err)
	}
	ops, err := array(f["operations"])
	if err != nil {
		return historyErr("operations: %v", err)
	}
	m.entries = make([]entry, len(ops))
	for i, raw := range ops {
		if m.entries[i], err = decodeEntry(raw); err != nil {
			return historyErr("operation %d: %v", i, err)
		}
	}
	return nil
}

func decodeEntry(raw json.RawMessage) (entry, error) {
	var e entry
	f, err := fields(raw, "id", "operation")
	if err != nil {
		return e, err
	}
	if e.id, err = uintValue(f["id"], math.MaxUint64); err != nil {
		return e, fmt.Errorf("id: %v", err)
	}
	e.op, err = ot.ParseNormal(f["operation"])
	return e, err
}

func decodeUserInfo(m *message, v json.RawMessage) error {
	f, err := fields(v, "id", "info")
	if err != nil {
		return err
	}
	if m.id, err = uintValue(f["id"], math.MaxUint64); err != nil {
		return err
	}
	if string(f["info"]) == "null" {
		return nil
	}
	info, err := fields(f["info"], "name", "hue")
	if err != nil {
		return err
	}
	u := &User{ID: m.id}
	if u.Name, err = str(info["name"]); err != nil {
		return err
	}
	hue, err := uintValue(info["hue"], math.MaxUint32)
	u.Hue, m.user = uint32(hue), u
	return err
}

// decodeUserCursor checks the id and the shape of data; cursor positions
// of other users are not tracked.
func decodeUserCursor(m *message, v json.RawMessage) error {
	f, err := fields(v, "id", "data")
	if err != nil {
		return err
	}
	if m.id, err = uintValue(f["id"], math.MaxUint64); err != nil {
		return err
	}
	data, err := fields(f["data"], "cursors", "selections")
	if err != nil {
		return err
	}
	if _, err := array(data["cursors"]); err != nil {
		return err
	}
	_, err = array(data["selections"])
	return err
}

// object decodes a JSON object, refusing duplicate keys and trailing data.
func object(v []byte) (map[string]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(v))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, fmt.Errorf("not an object")
	}
	out := map[string]json.RawMessage{}
	for dec.More() {
		t, err := dec.Token()
		key, ok := t.(string)
		if err != nil || !ok {
			return nil, fmt.Errorf("bad object key")
		}
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return nil, fmt.Errorf("bad value for %.40q", key)
		}
		if _, dup := out[key]; dup {
			return nil, fmt.Errorf("duplicate key %.40q", key)
		}
		out[key] = val
	}
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("unterminated object")
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("trailing data")
	}
	return out, nil
}

// fields decodes a struct whose names are all required; others are ignored.
func fields(v json.RawMessage, names ...string) (map[string]json.RawMessage, error) {
	obj, err := object(v)
	if err != nil {
		return nil, err
	}
	for _, n := range names {
		if _, ok := obj[n]; !ok {
			return nil, fmt.Errorf("missing field %q", n)
		}
	}
	return obj, nil
}

func str(v json.RawMessage) (string, error) {
	var s string
	if len(v) == 0 || v[0] != '"' || json.Unmarshal(v, &s) != nil {
		return "", fmt.Errorf("not a string")
	}
	return s, nil
}

func array(v json.RawMessage) ([]json.RawMessage, error) {
	var a []json.RawMessage
	if len(v) == 0 || v[0] != '[' || json.Unmarshal(v, &a) != nil {
		return nil, fmt.Errorf("not an array")
	}
	return a, nil
}

// uintValue accepts a JSON integer in [0, max]: no sign, fraction or exponent.
func uintValue(v json.RawMessage, max uint64) (uint64, error) {
	if len(v) == 0 || v[0] < '0' || v[0] > '9' || bytes.ContainsAny(v, ".eE") {
		return 0, fmt.Errorf("not an unsigned integer")
	}
	n, err := strconv.ParseUint(string(v), 10, 64)
	if err != nil || n > max {
		return 0, fmt.Errorf("integer out of range")
	}
	return n, nil
}
