package seal

import (
	"bytes"
	"errors"
	"testing"
	"time"
)

// FuzzOpen feeds arbitrary handles to Open. It must never panic, must
// answer only ErrInvalid for handles it did not issue, and must round-trip
// every payload it seals.
func FuzzOpen(f *testing.F) {
	s, err := New(testKey, &Options{Now: func() time.Time { return time.Unix(1_800_000_000, 0) }})
	if err != nil {
		f.Fatal(err)
	}
	h, _ := s.Seal("fuzz", []byte("seed"), time.Hour)
	f.Add(h, []byte("payload"))
	f.Add("", []byte{})
	f.Add("AQ", []byte{0})
	f.Fuzz(func(t *testing.T, handle string, payload []byte) {
		got, err := s.Open("fuzz", handle)
		if err != nil && !errors.Is(err, ErrInvalid) && !errors.Is(err, ErrExpired) {
			t.Fatalf("unexpected error kind: %v", err)
		}
		if err == nil && got == nil {
			t.Fatal("nil payload without error")
		}
		if len(payload) > defaultMaxPayload {
			return
		}
		sealed, err := s.SealFor("fuzz", "p", payload, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		back, err := s.OpenFor("fuzz", "p", sealed)
		if err != nil || !bytes.Equal(back, payload) {
			t.Fatalf("round trip failed: %v", err)
		}
		if _, err := s.Open("fuzz", sealed); !errors.Is(err, ErrInvalid) {
			t.Fatalf("bound handle opened unbound: %v", err)
		}
	})
}
