package session

import (
	"context"
	"crypto/tls"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	fake "github.com/bulwarkmcp/bulwark/internal/fake/rustpad"
	"github.com/bulwarkmcp/bulwark/servers/rustpad/ot"
)

// short deadlines for hostile cases.
func quick() *Options {
	return &Options{HandshakeTimeout: 400 * time.Millisecond, AckTimeout: 400 * time.Millisecond, ReadTimeout: 300 * time.Millisecond}
}

// within runs f and fails unless it ends within limit.
func within(t *testing.T, limit time.Duration, f func()) {
	t.Helper()
	start := time.Now()
	f()
	if d := time.Since(start); d > limit {
		t.Errorf("took %v, want at most %v", d, limit)
	}
}

// TestHandshakeFailures: every hostile handshake ends in a clear error within
// its deadline, with the connection closed and no goroutine left.
func TestHandshakeFailures(t *testing.T) {
	tests := []struct {
		name string
		h    fake.Hostile
		opts func(*Options)
		want error
	}{
		{"stall before identity", fake.Hostile{Stall: fake.StallBeforeIdentity}, nil, ErrDeadline},
		{"stall after identity", fake.Hostile{Stall: fake.StallAfterIdentity}, nil, ErrDeadline},
		{"chatter outlasts the handshake", fake.Hostile{Chatter: true}, nil, ErrDeadline},
		{"close mid-handshake", fake.Hostile{CloseAfterIdentity: true}, nil, ErrClosed},
		{"giant frame", fake.Hostile{GiantFrame: 64 << 10}, func(o *Options) { o.MaxFrameBytes = 32 << 10 }, ErrFrameTooLarge},
		{"queued bytes", fake.Hostile{GiantFrame: 64 << 10}, func(o *Options) { o.MaxQueueBytes = 32 << 10 }, ErrQueueOverflow},
	}
	for _, m := range fake.Malformations() {
		want := ErrMalformedHistory
		switch m {
		case fake.NotJSON:
			want = ErrProtocol
		case fake.ZeroLengthPart:
			want = ErrMalformedHistory // never sent by the real server
		}
		tests = append(tests, struct {
			name string
			h    fake.Hostile
			opts func(*Options)
			want error
		}{"malformed " + m.String(), fake.Hostile{Malformed: m}, nil, want})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := startPeer(t)
			s.SetHostile(tt.h)
			o := quick()
			if tt.opts != nil {
				tt.opts(o)
			}
			within(t, o.HandshakeTimeout+300*time.Millisecond, func() {
				sess, err := Dial(ctxT(t), s.URL, "pad", o)
				if !errors.Is(err, tt.want) {
					t.Errorf("Dial error %v, want %v", err, tt.want)
				}
				if sess != nil {
					sess.Close()
				}
			})
			waitNoConnections(t, s, "pad")
		})
	}
}

// More users than MaxUsers never fail the session: the first MaxUsers keep
// their names, the rest are counted (issue 10.2: anyone can open 201
// sockets to a public pad).
func TestManyUsersAreCountedNotRefused(t *testing.T) {
	for _, tt := range []struct {
		users, max, named, more int
	}{
		{201, 0, DefaultMaxUsers, 1},
		{5, 4, 4, 1},
		{4, 4, 4, 0},
		{60, 4, 4, 40}, // OthersPerUser × 4 ids counted, the rest only known to exist
	} {
		s := startPeer(t)
		s.SetHostile(fake.Hostile{Users: tt.users})
		o := quick()
		o.MaxUsers = tt.max
		sess, err := Dial(ctxT(t), s.URL, "pad", o)
		if err != nil {
			t.Fatalf("%d users, cap %d: %v", tt.users, tt.max, err)
		}
		st, err := sess.State()
		if err != nil || len(st.Users) != tt.named || st.MoreUsers != tt.more || st.MoreUsersAtLeast != (tt.users > tt.named+tt.more) {
			t.Errorf("%d users, cap %d: %d named, %d more (at least: %v), %v", tt.users, tt.max, len(st.Users), st.MoreUsers, st.MoreUsersAtLeast, err)
		}
		sess.Close()
	}
}

// Budget: a flood of joins, renames and leaves keeps at most MaxUsers
// names and OthersPerUser × MaxUsers ids, and costs microseconds each.
func TestUserListBudget(t *testing.T) {
	fs := newFoldState(Options{MaxUsers: 200, MaxDocument: 64})
	_ = fs.apply(message{kind: kindIdentity, id: 1})
	start := time.Now()
	for i := range uint64(1_000_000) {
		u := &User{Name: "x"}
		if i%7 == 3 {
			u = nil // leaves
		}
		if err := fs.apply(message{kind: kindUserInfo, id: 2 + i%50_000, user: u}); err != nil {
			t.Fatal(err)
		}
	}
	if len(fs.users) > 200 || len(fs.others) > 200*OthersPerUser || !fs.lost {
		t.Fatalf("%d names, %d ids, lost %v", len(fs.users), len(fs.others), fs.lost)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("a million user messages took %v", d)
	}
}

func waitNoConnections(t *testing.T, s *fake.Server, pad string) {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Second); s.Connections(pad) != 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d connections left open on the server", s.Connections(pad))
		}
	}
}

func TestDocumentCap(t *testing.T) {
	s := startPeer(t)
	write(t, s, "big", 0, ot.New().Insert(strings.Repeat("🎉", 100)))
	o := quick()
	o.MaxDocument = 99
	if _, err := Dial(ctxT(t), s.URL, "big", o); !errors.Is(err, ErrDocumentTooLarge) {
		t.Errorf("Dial: %v", err)
	}
	o.MaxDocument = 100
	sess, err := Dial(ctxT(t), s.URL, "big", o)
	if err != nil {
		t.Fatalf("a pad at the cap: %v", err)
	}
	defer sess.Close()
	write(t, s, "big", 1, ot.New().Retain(100).Insert("x"))
	if err := stateErr(t, sess); !errors.Is(err, ErrDocumentTooLarge) {
		t.Errorf("State: %v", err)
	}
}

// stateErr polls State until it fails (messages are folded on each call).
func stateErr(t *testing.T, sess *Session) error {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if _, err := sess.State(); err != nil {
			return err
		}
	}
	t.Fatal("State never failed")
	return nil
}

func TestDocumentCapWhileIdle(t *testing.T) {
	s := startPeer(t)
	o := quick()
	o.MaxDocument = 10
	sess := dial(t, s, "idle", o)
	write(t, s, "idle", 0, ot.New().Insert(strings.Repeat("a", 11)))
	if err := stateErr(t, sess); !errors.Is(err, ErrDocumentTooLarge) {
		t.Errorf("State: %v", err)
	}
	if err := sess.Err(); !errors.Is(err, ErrDocumentTooLarge) {
		t.Errorf("Err: %v", err)
	}
}

// A flood while the session is idle overflows the inbound queue.
func TestQueueOverflow(t *testing.T) {
	s := startPeer(t)
	s.SetHostile(fake.Hostile{Flood: 100})
	o := quick()
	o.MaxQueue = 10
	sess := dial(t, s, "flood", o)
	within(t, time.Second, func() {
		select {
		case <-sess.Done():
		case <-time.After(2 * time.Second):
		}
	})
	if err := sess.Err(); !errors.Is(err, ErrQueueOverflow) {
		t.Errorf("Err: %v", err)
	}
	if _, err := sess.State(); !errors.Is(err, ErrQueueOverflow) {
		t.Errorf("State after overflow: %v", err)
	}
}

func TestAckDeadline(t *testing.T) {
	s := startPeer(t)
	s.SetHostile(fake.Hostile{WithholdEcho: true})
	o := quick()
	o.ReadTimeout = time.Second // the ack deadline fires first
	sess := dial(t, s, "ack", o)
	within(t, o.AckTimeout+300*time.Millisecond, func() {
		_, err := sess.Edit(ctxT(t), 0, ot.New().Insert("maybe"))
		if !errors.Is(err, ErrOutcomeUnknown) || !errors.Is(err, ErrDeadline) {
			t.Errorf("Edit: %v", err)
		}
	})
	if s.Text("ack") != "maybe" {
		t.Errorf("the edit was applied by the server, which the error must not deny")
	}
	if _, err := sess.State(); !errors.Is(err, ErrDeadline) {
		t.Errorf("the session survived an ack deadline: %v", err)
	}
}

func TestReadDeadline(t *testing.T) {
	s := startPeer(t)
	s.SetHostile(fake.Hostile{WithholdEcho: true})
	o := quick()
	o.AckTimeout, o.ReadTimeout = 5*time.Second, 200*time.Millisecond
	sess := dial(t, s, "read", o)
	within(t, 600*time.Millisecond, func() {
		if err := sess.SetLanguage(ctxT(t), "go"); err != nil {
			t.Fatalf("SetLanguage: %v", err) // the language echo is not withheld
		}
		_, err := sess.Edit(ctxT(t), 0, ot.New().Insert("x"))
		if !errors.Is(err, ErrDeadline) || !strings.Contains(err.Error(), "no message") {
			t.Errorf("Edit: %v", err)
		}
	})
}

func TestCallerContext(t *testing.T) {
	s := startPeer(t)
	s.SetHostile(fake.Hostile{Stall: fake.StallAfterIdentity})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	within(t, 500*time.Millisecond, func() {
		if _, err := Dial(ctx, s.URL, "ctx", nil); !errors.Is(err, context.Canceled) {
			t.Errorf("Dial: %v", err)
		}
	})
	waitNoConnections(t, s, "ctx")
}

func TestServerGoesAway(t *testing.T) {
	s := fake.New()
	noLeak(t)
	sess, err := Dial(ctxT(t), s.URL, "gone", nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	<-sess.Done()
	if _, err := sess.Edit(ctxT(t), 0, ot.New().Insert("x")); !errors.Is(err, ErrClosed) {
		t.Errorf("Edit after the server left: %v", err)
	}
	sess.Close()
	sess.Close()
}

func TestCloseIsClean(t *testing.T) {
	s := startPeer(t)
	sess := dial(t, s, "close", nil)
	if err := sess.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := sess.State(); !errors.Is(err, ErrClosed) {
		t.Errorf("State after Close: %v", err)
	}
	waitNoConnections(t, s, "close")
}

// TLS settings apply to this session only.
func TestScopedTLS(t *testing.T) {
	s := startPeer(t)
	ts := httptest.NewUnstartedServer(s)
	ts.StartTLS()
	defer ts.Close()
	if _, err := Dial(ctxT(t), ts.URL, "tls", nil); !errors.Is(err, ErrDial) {
		t.Errorf("untrusted certificate accepted: %v", err)
	}
	sess, err := Dial(ctxT(t), ts.URL, "tls", &Options{TLSConfig: &tls.Config{InsecureSkipVerify: true}})
	if err != nil {
		t.Fatalf("insecure TLS for this connection: %v", err)
	}
	sess.Close()
	sess, err = Dial(ctxT(t), ts.URL, "tls", &Options{HTTPClient: ts.Client()})
	if err != nil {
		t.Fatalf("caller's client: %v", err)
	}
	sess.Close()
	if tr := http.DefaultTransport.(*http.Transport); tr.TLSClientConfig != nil && tr.TLSClientConfig.InsecureSkipVerify {
		t.Error("process-wide TLS settings changed")
	}
	if _, err := Dial(ctxT(t), ts.URL, "tls", nil); !errors.Is(err, ErrDial) {
		t.Errorf("insecure setting leaked into a later session: %v", err)
	}
	s.Close() // end served connections before ts.Close waits for them
}

func TestValidation(t *testing.T) {
	for _, id := range []string{"", ".", "..", "a/b", "a b", "a%20b", strings.Repeat("a", 101), "é"} {
		if err := ValidatePadID(id); !errors.Is(err, ErrInvalidPadID) {
			t.Errorf("ValidatePadID(%q) = %v", id, err)
		}
	}
	tests := []struct{ base, want string }{
		{"http://127.0.0.1:3030", "ws://127.0.0.1:3030/api/socket/p.1_-"},
		{"https://pad.example/prefix/", "wss://pad.example/prefix/api/socket/p.1_-"},
	}
	for _, tt := range tests {
		if got, err := SocketURL(tt.base, "p.1_-"); err != nil || got != tt.want {
			t.Errorf("SocketURL(%q) = %q, %v", tt.base, got, err)
		}
	}
	for _, base := range []string{"ftp://h", "http://u:p@h", "http://h?q=1", "http://h#f", "h", "ws://h"} {
		if _, err := SocketURL(base, "p"); !errors.Is(err, ErrInvalidURL) {
			t.Errorf("SocketURL(%q) = %v", base, err)
		}
	}
}
