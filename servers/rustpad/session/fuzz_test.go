package session

import (
	"errors"
	"testing"
	"time"
)

// FuzzDecode feeds hostile server frames to the decoder and the fold: they
// must never panic, and every refusal must wrap a sentinel error.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{"Identity":18446744073709551615}`,
		`{"History":{"start":0,"operations":[{"id":1,"operation":["h🎉",0]}]}}`,
		`{"History":{"start":0,"operations":[{"id":1,"operation":[1.5]}]}}`,
		`{"UserInfo":{"id":1,"info":{"name":"x","hue":1}}}`, `{"UserInfo":{"id":1,"info":null}}`,
		`{"UserCursor":{"id":0,"data":{"cursors":[],"selections":[]}}}`, `{"Language":"\ud800"}`, `null`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, frame []byte) {
		m, err := decode(frame)
		if err != nil {
			if !errors.Is(err, ErrProtocol) && !errors.Is(err, ErrMalformedHistory) {
				t.Fatalf("unclassified error %v", err)
			}
			return
		}
		fs := newFoldState(Options{MaxUsers: 2, MaxDocument: 64})
		fs.deadline = time.Now().Add(time.Second)
		_ = fs.apply(message{kind: kindIdentity})
		if err := fs.apply(m); err != nil && !errors.Is(err, ErrMalformedHistory) &&
			!errors.Is(err, ErrDocumentTooLarge) && !errors.Is(err, ErrProtocol) {
			t.Fatalf("unclassified fold error %v", err)
		}
	})
}
