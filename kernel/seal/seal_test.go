package seal

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

var testKey = []byte("0123456789abcdef0123456789abcdef")

type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func newTest(t *testing.T) (*Sealer, *clock) {
	t.Helper()
	c := &clock{t: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)}
	s, err := New(testKey, &Options{Now: c.now})
	if err != nil {
		t.Fatal(err)
	}
	return s, c
}

func TestRoundTrip(t *testing.T) {
	s, _ := newTest(t)
	for _, payload := range [][]byte{nil, []byte("x"), []byte("device-code-123"), bytes.Repeat([]byte{0xff}, defaultMaxPayload)} {
		h, err := s.Seal("device-grant", payload, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if strings.ContainsAny(h, "+/=") {
			t.Fatalf("handle is not URL-safe raw base64: %q", h)
		}
		got, err := s.Open("device-grant", h)
		if err != nil || !bytes.Equal(got, payload) {
			t.Fatalf("Open = %q, %v; want %q", got, err, payload)
		}
	}
}

func TestHandleDoesNotContainPayload(t *testing.T) {
	s, _ := newTest(t)
	h, _ := s.Seal("p", []byte("SECRET-DEVICE-CODE"), time.Minute)
	raw, _ := base64.RawURLEncoding.DecodeString(h)
	if bytes.Contains(raw, []byte("SECRET")) || strings.Contains(h, "SECRET") {
		t.Fatal("payload visible in handle")
	}
}

func TestNoncesDiffer(t *testing.T) {
	s, _ := newTest(t)
	a, _ := s.Seal("p", []byte("same"), time.Minute)
	b, _ := s.Seal("p", []byte("same"), time.Minute)
	if a == b {
		t.Fatal("two seals of the same payload are identical")
	}
}

func TestOpenRefusals(t *testing.T) {
	s, c := newTest(t)
	other, _ := New([]byte("fedcba9876543210fedcba9876543210"), &Options{Now: c.now})
	h, _ := s.Seal("device-grant", []byte("code"), time.Minute)
	hb, _ := s.SealFor("device-grant", "alice", []byte("code"), time.Minute)
	raw, _ := base64.RawURLEncoding.DecodeString(h)
	badVersion := append([]byte{0x02}, raw[1:]...)

	tests := []struct {
		name string
		open func() ([]byte, error)
	}{
		{"wrong purpose", func() ([]byte, error) { return s.Open("cursor", h) }},
		{"empty purpose", func() ([]byte, error) { return s.Open("", h) }},
		{"other key", func() ([]byte, error) { return other.Open("device-grant", h) }},
		{"empty", func() ([]byte, error) { return s.Open("device-grant", "") }},
		{"not base64", func() ([]byte, error) { return s.Open("device-grant", "!!!!") }},
		{"padded", func() ([]byte, error) { return s.Open("device-grant", h+"=") }},
		{"std alphabet", func() ([]byte, error) { return s.Open("device-grant", base64.StdEncoding.EncodeToString(raw)) }},
		{"bad version", func() ([]byte, error) {
			return s.Open("device-grant", base64.RawURLEncoding.EncodeToString(badVersion))
		}},
		{"huge", func() ([]byte, error) { return s.Open("device-grant", strings.Repeat("A", 1<<20)) }},
		{"bound opened unbound", func() ([]byte, error) { return s.Open("device-grant", hb) }},
		{"unbound opened bound", func() ([]byte, error) { return s.OpenFor("device-grant", "alice", h) }},
		{"wrong principal", func() ([]byte, error) { return s.OpenFor("device-grant", "bob", hb) }},
		{"principal prefix", func() ([]byte, error) { return s.OpenFor("device-grant", "alic", hb) }},
		{"empty principal", func() ([]byte, error) { return s.OpenFor("device-grant", "", hb) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.open()
			if !errors.Is(err, ErrInvalid) || got != nil {
				t.Fatalf("got %q, %v; want ErrInvalid", got, err)
			}
		})
	}
	if got, err := s.OpenFor("device-grant", "alice", hb); err != nil || string(got) != "code" {
		t.Fatalf("bound handle does not open for its principal: %q, %v", got, err)
	}
}

func TestTamperEveryByte(t *testing.T) {
	s, _ := newTest(t)
	h, _ := s.SealFor("p", "alice", []byte("payload bytes"), time.Minute)
	raw, _ := base64.RawURLEncoding.DecodeString(h)
	for i := range raw {
		for _, mask := range []byte{0x01, 0x80, 0xff} {
			mod := bytes.Clone(raw)
			mod[i] ^= mask
			got, err := s.OpenFor("p", "alice", base64.RawURLEncoding.EncodeToString(mod))
			if !errors.Is(err, ErrInvalid) || got != nil {
				t.Fatalf("byte %d ^ %#x: got %q, %v; want ErrInvalid", i, mask, got, err)
			}
		}
	}
}

func TestTamperEveryChar(t *testing.T) {
	s, _ := newTest(t)
	h, _ := s.Seal("p", []byte("payload"), time.Minute)
	for i := range h {
		for _, c := range []byte("A_-z0") {
			if h[i] == c {
				continue
			}
			mod := h[:i] + string(c) + h[i+1:]
			if _, err := s.Open("p", mod); !errors.Is(err, ErrInvalid) {
				t.Fatalf("char %d -> %q: err %v, want ErrInvalid", i, c, err)
			}
		}
	}
}

func TestTruncated(t *testing.T) {
	s, _ := newTest(t)
	h, _ := s.Seal("p", []byte("payload"), time.Minute)
	raw, _ := base64.RawURLEncoding.DecodeString(h)
	for n := range len(raw) {
		if _, err := s.Open("p", base64.RawURLEncoding.EncodeToString(raw[:n])); !errors.Is(err, ErrInvalid) {
			t.Fatalf("truncated to %d bytes: err %v, want ErrInvalid", n, err)
		}
	}
	for n := range len(h) {
		if _, err := s.Open("p", h[:n]); !errors.Is(err, ErrInvalid) {
			t.Fatalf("truncated to %d chars: err %v, want ErrInvalid", n, err)
		}
	}
	if _, err := s.Open("p", h+"AAAA"); !errors.Is(err, ErrInvalid) {
		t.Fatalf("extended handle: err %v, want ErrInvalid", err)
	}
}

func TestExpiry(t *testing.T) {
	s, c := newTest(t)
	h, _ := s.Seal("p", []byte("x"), 5*time.Minute)
	c.t = c.t.Add(5*time.Minute - time.Millisecond)
	if _, err := s.Open("p", h); err != nil {
		t.Fatalf("just before expiry: %v", err)
	}
	c.t = c.t.Add(time.Millisecond)
	if got, err := s.Open("p", h); !errors.Is(err, ErrExpired) || got != nil {
		t.Fatalf("at expiry: %q, %v; want ErrExpired", got, err)
	}
	c.t = c.t.Add(time.Hour)
	if _, err := s.Open("cursor", h); !errors.Is(err, ErrInvalid) {
		t.Fatalf("expired handle with wrong purpose must be ErrInvalid, got %v", err)
	}
}

func TestSealRefusals(t *testing.T) {
	s, _ := newTest(t)
	tests := []struct {
		name string
		seal func() (string, error)
		want error
	}{
		{"zero ttl", func() (string, error) { return s.Seal("p", nil, 0) }, ErrTTL},
		{"negative ttl", func() (string, error) { return s.Seal("p", nil, -time.Second) }, ErrTTL},
		{"ttl too long", func() (string, error) { return s.Seal("p", nil, maxTTL+time.Second) }, ErrTTL},
		{"empty purpose", func() (string, error) { return s.Seal("", nil, time.Minute) }, ErrPurpose},
		{"long purpose", func() (string, error) { return s.Seal(strings.Repeat("p", 256), nil, time.Minute) }, ErrPurpose},
		{"too large", func() (string, error) { return s.Seal("p", make([]byte, defaultMaxPayload+1), time.Minute) }, ErrTooLarge},
		{"empty principal", func() (string, error) { return s.SealFor("p", "", nil, time.Minute) }, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := tt.seal()
			if err == nil || h != "" || (tt.want != nil && !errors.Is(err, tt.want)) {
				t.Fatalf("got %q, %v; want error %v", h, err, tt.want)
			}
		})
	}
}

func TestNewKeyChecks(t *testing.T) {
	if _, err := New(testKey[:31], nil); !errors.Is(err, ErrShortKey) {
		t.Fatalf("31-byte key: %v", err)
	}
	if _, err := New(make([]byte, 32), nil); !errors.Is(err, ErrWeakKey) {
		t.Fatalf("zero key: %v", err)
	}
	key := bytes.Clone(testKey)
	s, err := New(key, nil)
	if err != nil {
		t.Fatal(err)
	}
	h, _ := s.Seal("p", []byte("x"), time.Minute)
	key[0] ^= 1 // the caller's slice must not alias the Sealer's key
	if _, err := s.Open("p", h); err != nil {
		t.Fatalf("Sealer depends on caller's key slice: %v", err)
	}
}

func TestParseKey(t *testing.T) {
	want := testKey
	tests := []struct {
		name, in string
		err      error
	}{
		{"hex", hex.EncodeToString(want), nil},
		{"hex upper", strings.ToUpper(hex.EncodeToString(want)), nil},
		{"std", base64.StdEncoding.EncodeToString(want), nil},
		{"raw std", base64.RawStdEncoding.EncodeToString(want), nil},
		{"url", base64.URLEncoding.EncodeToString(want), nil},
		{"raw url with newline", base64.RawURLEncoding.EncodeToString(want) + "\n", nil},
		{"short", base64.StdEncoding.EncodeToString(want[:31]), ErrShortKey},
		{"short hex", hex.EncodeToString(want[:31]), ErrShortKey},
		{"empty", "", ErrShortKey},
		{"garbage", "not a key at all!", errKeyEncoding},
		{"weak", hex.EncodeToString(make([]byte, 32)), ErrWeakKey},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseKey(tt.in)
			if !errors.Is(err, tt.err) {
				t.Fatalf("err = %v, want %v", err, tt.err)
			}
			if tt.err == nil && !bytes.Equal(got, want) {
				t.Fatalf("key = %x, want %x", got, want)
			}
			if err != nil && tt.in != "" && strings.Contains(err.Error(), strings.TrimSpace(tt.in)) {
				t.Fatal("error message contains the key")
			}
		})
	}
}

func TestPurposeKeysAreDistinct(t *testing.T) {
	a, _ := derive(testKey, "device-grant")
	b, _ := derive(testKey, "cursor")
	nonce := make([]byte, nonceLen)
	if bytes.Equal(a.Seal(nil, nonce, []byte("x"), nil), b.Seal(nil, nonce, []byte("x"), nil)) {
		t.Fatal("two purposes derived the same key")
	}
}

func TestManyPurposesAndConcurrency(t *testing.T) {
	s, _ := newTest(t)
	var wg sync.WaitGroup
	for i := range 2 * maxPurposes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := "purpose-" + string(rune('A'+i%26)) + strings.Repeat("x", i)
			h, err := s.Seal(p, []byte(p), time.Minute)
			if err != nil {
				t.Error(err)
				return
			}
			if got, err := s.Open(p, h); err != nil || string(got) != p {
				t.Errorf("purpose %d: %q, %v", i, got, err)
			}
		}()
	}
	wg.Wait()
	if len(s.keys) > maxPurposes {
		t.Fatalf("key cache grew to %d", len(s.keys))
	}
}

func BenchmarkSealOpen(b *testing.B) {
	s, err := New(testKey, nil)
	if err != nil {
		b.Fatal(err)
	}
	payload := []byte("GmRhmhcxhwAzkoEqiMEg_DnyEysNkuNhszIySk9eS")
	for b.Loop() {
		h, _ := s.SealFor("device-grant", "alice", payload, time.Minute)
		if _, err := s.OpenFor("device-grant", "alice", h); err != nil {
			b.Fatal(err)
		}
	}
}

// TestWireFormatStable opens a handle sealed by an earlier build (also the
// FuzzOpen seed "valid"), so that a change to the format or the key
// derivation cannot slip in unnoticed: handles in flight must keep opening.
func TestWireFormatStable(t *testing.T) {
	s, err := New(testKey, &Options{Now: func() time.Time { return time.Unix(1_800_000_000, 0) }})
	if err != nil {
		t.Fatal(err)
	}
	const h = "AfBKu0i-BB1-go-BORu9yK9uBCIOSvfzeNc3rBqY6NfkGBJuv7Is5g0rrVrR4Lxb"
	got, err := s.Open("fuzz", h)
	if err != nil || string(got) != "device-code" {
		t.Fatalf("Open = %q, %v", got, err)
	}
}
