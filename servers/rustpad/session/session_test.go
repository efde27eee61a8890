package session

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	fake "github.com/bulwarkmcp/bulwark/internal/fake/rustpad"
	"github.com/bulwarkmcp/bulwark/servers/rustpad/ot"
)

// noLeak fails the test if goroutines started after it was called are still
// running shortly after the test body (and its Close calls) ended.
func noLeak(t *testing.T) {
	t.Helper()
	before := runtime.NumGoroutine()
	t.Cleanup(func() {
		deadline := time.Now().Add(3 * time.Second)
		for runtime.NumGoroutine() > before {
			if time.Now().After(deadline) {
				buf := make([]byte, 1<<16)
				t.Fatalf("goroutines: %d before, %d after\n%s", before, runtime.NumGoroutine(), buf[:runtime.Stack(buf, true)])
			}
			time.Sleep(5 * time.Millisecond)
		}
	})
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// startPeer starts a fake server. The leak check runs while it is still up,
// so a session goroutine that only the server's shutdown would end is caught.
func startPeer(t *testing.T) *fake.Server {
	t.Helper()
	s := fake.New()
	t.Cleanup(s.Close)
	noLeak(t) // the server's own goroutines are the baseline
	return s
}

func dial(t *testing.T, s *fake.Server, pad string, o *Options) *Session {
	t.Helper()
	sess, err := Dial(ctxT(t), s.URL, pad, o)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() { sess.Close() })
	return sess
}

func state(t *testing.T, s *Session) State {
	t.Helper()
	st, err := s.State()
	if err != nil {
		t.Fatalf("State: %v", err)
	}
	return st
}

// write puts text on a pad through a raw client and waits for the echo.
func write(t *testing.T, s *fake.Server, pad string, rev int, op *ot.Operation) {
	t.Helper()
	c, err := fake.Connect(ctxT(t), s.URL, pad)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.SendEdit(ctxT(t), rev, op); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ReadUntil(ctxT(t), fmt.Sprintf(`{"id":%d,`, c.ID)); err != nil {
		t.Fatal(err)
	}
}

func TestEmptyAndRestoredPads(t *testing.T) {
	s := startPeer(t)
	st := state(t, dial(t, s, "fresh", nil))
	if st.Text != "" || st.Revision != 0 || st.LanguageSet || len(st.Users) != 0 {
		t.Errorf("fresh pad state %+v", st)
	}
	if err := s.Restore("restored", ""); err != nil {
		t.Fatal(err)
	}
	if st := state(t, dial(t, s, "restored", nil)); st.Text != "" || st.Revision != 1 {
		t.Errorf("restored empty pad state %+v", st)
	}
	if err := s.Restore("saved", "héllo"); err != nil {
		t.Fatal(err)
	}
	if st := state(t, dial(t, s, "saved", nil)); st.Text != "héllo" || st.Length != 5 {
		t.Errorf("restored pad state %+v", st)
	}
}

// The never-edited-pad trap (§7): a History that arrives late is still seen,
// because Dial waits for the barrier echo, not for silence.
func TestLateHistoryIsNotAnEmptyPad(t *testing.T) {
	s := startPeer(t)
	write(t, s, "trap", 0, ot.New().Insert("old text"))
	s.SetHostile(fake.Hostile{BurstDelay: 400 * time.Millisecond})
	sess := dial(t, s, "trap", nil)
	if st := state(t, sess); st.Text != "old text" || st.Revision != 1 {
		t.Fatalf("state %+v", st)
	}
	res, err := sess.Edit(ctxT(t), 1, ot.New().Retain(8).Insert("!"))
	if err != nil || res.Revision != 2 {
		t.Fatalf("Edit: %+v %v", res, err)
	}
	if got := s.Text("trap"); got != "old text!" {
		t.Errorf("server text %q", got)
	}
}

func TestEditLanguageUsers(t *testing.T) {
	s := startPeer(t)
	other, err := fake.Connect(ctxT(t), s.URL, "p")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := other.Send(ctxT(t), `{"ClientInfo":{"name":"Bob <b>","hue":7}}`); err != nil {
		t.Fatal(err)
	}
	if _, err := other.ReadUntil(ctxT(t), "UserInfo"); err != nil {
		t.Fatal(err)
	}
	sess := dial(t, s, "p", &Options{Name: "bulwark", Hue: 200})
	st := state(t, sess)
	if len(st.Users) != 1 || st.Users[0] != (User{ID: other.ID, Name: "Bob <b>", Hue: 7}) {
		t.Errorf("users %+v", st.Users)
	}
	res, err := sess.Edit(ctxT(t), st.Revision, ot.New().Insert("h🎉llo"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Revision != 1 || res.Operation.String() != `["h🎉llo"]` {
		t.Errorf("result %d %v", res.Revision, res.Operation)
	}
	if _, err := other.ReadUntil(ctxT(t), `"name":"bulwark","hue":200`); err != nil {
		t.Errorf("ClientInfo not seen by the other user: %v", err)
	}
	if err := sess.SetLanguage(ctxT(t), "rust"); err != nil {
		t.Fatal(err)
	}
	if st := state(t, sess); st.Language != "rust" || !st.LanguageSet || st.Text != "h🎉llo" {
		t.Errorf("state %+v", st)
	}
	other.Close()
	deadline := time.Now().Add(2 * time.Second)
	for len(state(t, sess).Users) != 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if users := state(t, sess).Users; len(users) != 0 {
		t.Errorf("user did not leave: %+v", users)
	}
}

func TestEditRejectedLocally(t *testing.T) {
	s := startPeer(t)
	sess := dial(t, s, "local", &Options{MaxDocument: 4})
	ctx := ctxT(t)
	if _, err := sess.Edit(ctx, 0, ot.New().Retain(3)); !errors.Is(err, ot.ErrLengthMismatch) {
		t.Errorf("misfit edit: %v", err)
	}
	if _, err := sess.Edit(ctx, 5, ot.New().Insert("x")); !errors.Is(err, ErrRevisionNotKnown) {
		t.Errorf("future revision: %v", err)
	}
	if _, err := sess.Edit(ctx, 0, ot.New().Insert("too long")); !errors.Is(err, ErrDocumentTooLarge) {
		t.Errorf("oversized edit: %v", err)
	}
	if _, err := sess.Edit(ctx, 0, ot.New().Insert("ok")); err != nil {
		t.Errorf("the session did not survive local refusals: %v", err)
	}
}

// A second user edits concurrently, with stale revisions, while the session
// edits: both converge on the server's text and no insert is lost.
func TestConcurrentEditorConverges(t *testing.T) {
	s := startPeer(t)
	sess := dial(t, s, "co", nil)
	other, err := fake.Connect(ctxT(t), s.URL, "co")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	ctx := ctxT(t)
	const rounds = 40
	var wg sync.WaitGroup
	wg.Go(func() {
		// The other user always edits at revision 0 of an empty pad: each
		// insert is stale and transformed by the server.
		for i := range rounds {
			if err := other.SendEdit(ctx, 0, ot.New().Insert(fmt.Sprintf("<o%d>", i))); err != nil {
				t.Error(err)
				return
			}
		}
	})
	for i := range rounds {
		st := state(t, sess)
		pos := st.Length / 2
		op := ot.New().Retain(pos).Insert(fmt.Sprintf("[s%d]", i)).Retain(st.Length - pos)
		if _, err := sess.Edit(ctx, st.Revision, op); err != nil {
			t.Fatalf("round %d: %v", i, err)
		}
	}
	wg.Wait()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if _, rev := s.State("co"); rev == 2*rounds {
			break
		}
	}
	want, rev := s.State("co")
	if rev != 2*rounds {
		t.Fatalf("server revision %d", rev)
	}
	for deadline := time.Now().Add(2 * time.Second); state(t, sess).Revision < rev && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	if got := state(t, sess).Text; got != want {
		t.Fatalf("session text %q, server %q", got, want)
	}
	// Inserts may land inside each other's tokens; no character may be lost.
	var all strings.Builder
	for i := range rounds {
		fmt.Fprintf(&all, "<o%d>[s%d]", i, i)
	}
	if sortRunes(want) != sortRunes(all.String()) {
		t.Errorf("text lost or duplicated: %q", want)
	}
}

func sortRunes(s string) string {
	r := []rune(s)
	slices.Sort(r)
	return string(r)
}
