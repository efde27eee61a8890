package rustpad

import (
	"strconv"

	"github.com/bulwarkmcp/bulwark/servers/rustpad/ot"
)

// Server-to-client frames, encoded like serde_json::to_string: compact,
// externally tagged, fields in declaration order.

func identityMsg(id uint64) []byte {
	return append(strconv.AppendUint([]byte(`{"Identity":`), id, 10), '}')
}

func historyMsg(start int, ops []entry) []byte {
	b := strconv.AppendInt([]byte(`{"History":{"start":`), int64(start), 10)
	b = append(b, `,"operations":[`...)
	for i, e := range ops {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendUint(append(b, `{"id":`...), e.id, 10)
		b = append(b, `,"operation":`...)
		op, _ := e.op.MarshalJSON() // stored operations are valid
		b = append(append(b, op...), '}')
	}
	return append(b, "]}}"...)
}

func languageMsg(lang string) []byte {
	return append(ot.AppendJSONString([]byte(`{"Language":`), lang), '}')
}

func userInfoMsg(id uint64, u *userInfo) []byte {
	b := strconv.AppendUint([]byte(`{"UserInfo":{"id":`), id, 10)
	if u == nil {
		return append(b, `,"info":null}}`...)
	}
	b = ot.AppendJSONString(append(b, `,"info":{"name":`...), u.name)
	b = strconv.AppendUint(append(b, `,"hue":`...), uint64(u.hue), 10)
	return append(b, "}}}"...)
}

func userCursorMsg(id uint64, c cursorData) []byte {
	b := strconv.AppendUint([]byte(`{"UserCursor":{"id":`), id, 10)
	b = append(b, `,"data":`...)
	b = appendCursorData(b, c)
	return append(b, "}}"...)
}

func appendCursorData(b []byte, c cursorData) []byte {
	b = append(b, `{"cursors":[`...)
	for i, x := range c.cursors {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendUint(b, uint64(x), 10)
	}
	b = append(b, `],"selections":[`...)
	for i, s := range c.selections {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendUint(append(b, '['), uint64(s[0]), 10)
		b = strconv.AppendUint(append(b, ','), uint64(s[1]), 10)
		b = append(b, ']')
	}
	return append(b, "]}"...)
}
