package rustpad

import (
	"errors"
	"testing"

	"github.com/bulwarkmcp/bulwark/servers/rustpad/ot"
)

// FuzzDecodeClient feeds hostile client frames to the peer's strict decoder:
// it must never panic and must refuse with errReject or an ot error.
func FuzzDecodeClient(f *testing.F) {
	for _, s := range []string{
		`{"Edit":{"revision":0,"operation":["x"]}}`, `{"ClientInfo":{"name":"a","hue":1}}`,
		`{"CursorData":{"cursors":[1],"selections":[[1,2]]}}`, `{"SetLanguage":"\ud800"}`, `{"Invalid":0}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, frame []byte) {
		m, err := decodeClient(frame)
		if err != nil {
			if !errors.Is(err, errReject) && !errors.Is(err, ot.ErrMalformedJSON) && !errors.Is(err, ot.ErrInvalidOperation) {
				t.Fatalf("unclassified error %v", err)
			}
			return
		}
		if m.kind == "Edit" && m.op == nil {
			t.Fatal("Edit without operation")
		}
	})
}
