package rustpad

import (
	"fmt"
	"strings"
	"time"
)

// Stall selects where a stalling peer goes silent.
type Stall int

// Stall points.
const (
	NoStall             Stall = iota
	StallBeforeIdentity       // upgrade, then send nothing and read nothing
	StallAfterIdentity        // send Identity (and injections), then nothing
)

// Malformation names a malformed History that replaces the real one in the
// initial burst.
type Malformation int

// Malformed History variants.
const (
	WellFormed        Malformation = iota
	NegativeID                     // "id":-1
	FloatID                        // "id":1.5
	OverflowID                     // "id":18446744073709551616 (beyond u64)
	StringID                       // "id":"0"
	FloatRetain                    // "operation":[1.5]
	NullOperation                  // "operation":null
	LoneSurrogate                  // "operation":["\ud800"]
	NotApplicable                  // "operation":[5] on a pad whose text is not 5 long
	RevisionGap                    // "start":5 when the client is at revision 0
	NullOperations                 // "operations":null
	ZeroLengthPart                 // "operation":[0,"x",0]: normalisable, never sent by the server
	InvalidUTF8                    // raw invalid UTF-8 inside the insert
	NotJSON                        // a text frame that is not JSON
	malformationCount              // sentinel
)

// Frame returns the raw text frame for a malformation ("" for WellFormed).
func (m Malformation) Frame() string {
	op := func(start, id, operation string) string {
		return fmt.Sprintf(`{"History":{"start":%s,"operations":[{"id":%s,"operation":%s}]}}`, start, id, operation)
	}
	switch m {
	case NegativeID:
		return op("0", "-1", `["x"]`)
	case FloatID:
		return op("0", "1.5", `["x"]`)
	case OverflowID:
		return op("0", "18446744073709551616", `["x"]`)
	case StringID:
		return op("0", `"0"`, `["x"]`)
	case FloatRetain:
		return op("0", "1", `[1.5]`)
	case NullOperation:
		return op("0", "1", `null`)
	case LoneSurrogate:
		return op("0", "1", `["\ud800"]`)
	case NotApplicable:
		return op("0", "1", `[5,"x"]`)
	case RevisionGap:
		return op("5", "1", `["x"]`)
	case NullOperations:
		return `{"History":{"start":0,"operations":null}}`
	case ZeroLengthPart:
		return op("0", "1", `[0,"x",0]`)
	case InvalidUTF8:
		return op("0", "1", "[\"\xff\xfe\"]")
	case NotJSON:
		return `History{start=0}`
	}
	return ""
}

// Malformations lists every malformed History variant.
func Malformations() []Malformation {
	out := make([]Malformation, 0, malformationCount-1)
	for m := NegativeID; m < malformationCount; m++ {
		out = append(out, m)
	}
	return out
}

func (m Malformation) String() string {
	names := []string{"WellFormed", "NegativeID", "FloatID", "OverflowID", "StringID", "FloatRetain",
		"NullOperation", "LoneSurrogate", "NotApplicable", "RevisionGap", "NullOperations",
		"ZeroLengthPart", "InvalidUTF8", "NotJSON"}
	if m >= 0 && int(m) < len(names) {
		return names[m]
	}
	return fmt.Sprintf("Malformation(%d)", int(m))
}

// Hostile switches the peer into hostile behaviour for connections opened
// after [Server.SetHostile]. The zero value is a faithful server.
type Hostile struct {
	// Stall makes the peer go silent at the given point; the connection stays
	// open until the client leaves or the server closes.
	Stall Stall
	// CloseAfterIdentity drops the TCP connection right after Identity
	// (and any injections), in the middle of the handshake.
	CloseAfterIdentity bool
	// GiantFrame, if positive, sends one Language frame of about this many
	// bytes right after Identity.
	GiantFrame int
	// Malformed replaces the burst's History with a malformed one (sent even
	// when the pad has no operations).
	Malformed Malformation
	// Users adds this many invented users (UserInfo) to the initial burst.
	Users int
	// BurstDelay waits this long between Identity and the rest of the burst,
	// the never-edited-pad trap of §7 made visible.
	BurstDelay time.Duration
	// Chatter sends a UserCursor of an invented user every millisecond after
	// the burst, and never reads the client's messages.
	Chatter bool
	// Flood sends this many UserCursor messages back to back right after the
	// reply to the client's first message (after the barrier echo).
	Flood int
	// WithholdEcho applies this connection's edits but never sends it any
	// History after the burst, so its edits are never acknowledged.
	WithholdEcho bool
}

// inventedID is the first id of users made up by the hostile modes.
const inventedID = 1 << 40

func (h Hostile) injections() [][]byte {
	var out [][]byte
	if h.GiantFrame > 0 {
		out = append(out, languageMsg(strings.Repeat("x", h.GiantFrame)))
	}
	if f := h.Malformed.Frame(); f != "" {
		out = append(out, []byte(f))
	}
	return out
}

func (h Hostile) invented() [][]byte {
	out := make([][]byte, 0, h.Users)
	for i := range h.Users {
		out = append(out, userInfoMsg(inventedID+uint64(i), &userInfo{name: fmt.Sprintf("user-%d", i), hue: 1}))
	}
	return out
}

func floodMsg(i int) []byte {
	return userCursorMsg(inventedID, cursorData{cursors: []uint32{uint32(i)}})
}
